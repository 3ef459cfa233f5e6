// Package tomlfile decodes TOML configuration files strictly and reports
// their errors with a position: every parse error, type mismatch, unknown key
// and validation failure becomes an *Error naming the file, line and key.
//
// BurntSushi/toml gives positions for syntax errors only; it keeps the
// positions of keys to itself. KeyLine recovers them with a small line
// scanner, which is also what callers use to place their own validation
// errors (At).
package tomlfile
