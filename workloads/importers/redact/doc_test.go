package redact_test

import (
	"fmt"

	"github.com/ctxsim/ctxsim/workloads/importers/redact"
)

func ExampleString() {
	fmt.Println(redact.String("export ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx"))
	// Output: export ANTHROPIC_API_KEY=sk-ant-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
}
