// Package blueprints embeds the real agent blueprints that ctxsim ships, so
// that a region policy can name one ("regions:coder") without a path.
package blueprints

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed leviath/*.leviath
var files embed.FS

// Names lists the embedded blueprints, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(files, "leviath")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".leviath"))
	}
	sort.Strings(names)
	return names
}

// Source returns the TOML text of the embedded blueprint name (for example
// "coder").
func Source(name string) ([]byte, error) {
	b, err := files.ReadFile("leviath/" + name + ".leviath")
	if err != nil {
		return nil, fmt.Errorf("no embedded blueprint %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}
