package importers

import (
	"unicode/utf16"
	"unicode/utf8"
)

const utf8RuneError = utf8.RuneError

func utf16IsSurrogate(r rune) bool           { return utf16.IsSurrogate(r) }
func utf16Decode(r1, r2 rune) rune           { return utf16.DecodeRune(r1, r2) }
func utf8AppendRune(b []byte, r rune) []byte { return utf8.AppendRune(b, r) }
func utf8DecodeRune(b []byte) (rune, int)    { return utf8.DecodeRune(b) }
