// Package golden compares test output with golden files in testdata and
// rewrites them when the tests run with -update, for every package's golden
// tests alike. Import it from _test.go files only: it defines the -update
// flag.
package golden
