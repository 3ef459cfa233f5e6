package main

import (
	"context"
	"errors"
	"io"
)

// cmdConvert is not built yet; its issue replaces this file.
func cmdConvert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("convert: not built yet")
}
