package main

import (
	"context"
	"errors"
	"io"
)

// cmdMerge is not built yet; its issue replaces this file.
func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("merge: not built yet")
}
