// Package rhai is a sandboxed interpreter for the subset of the Rhai
// scripting language that custom regions use.
package rhai
