package tomlfile_test

import (
	"errors"
	"fmt"

	"github.com/ctxsim/ctxsim/internal/tomlfile"
)

func ExampleDecode() {
	var grid struct {
		Models  []string `toml:"models"`
		Windows []int    `toml:"windows"`
	}
	data := []byte("models = [\"m\"]\nwindow = [8000]\n")
	_, err := tomlfile.Decode(data, "grid.toml", &grid)
	fmt.Println(err)
	var e *tomlfile.Error
	if errors.As(err, &e) {
		fmt.Println(e.Line, e.Key, errors.Is(err, tomlfile.ErrUnknownKey))
	}
	// Output:
	// grid.toml:2: window: unknown key (did you mean "windows"? want one of models, windows)
	// 2 window true
}

func ExampleAt() {
	data := []byte("[[model]]\nname = \"a\"\n\n[[model]]\nname = \"b\"\nwindow = -1\n")
	fmt.Println(tomlfile.At(data, "models.toml", "model[1].window", errors.New("-1: want a positive number of tokens")))
	// Output:
	// models.toml:6: model[1].window: -1: want a positive number of tokens
}
