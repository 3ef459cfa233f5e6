package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Summarizer condenses a region's content (D9).
type Summarizer interface {
	Summarize(req SummaryRequest) (string, error)
}

// SummaryRequest is one summarisation: the region, its content (entries
// joined by blank lines) and the summary budget in tokens.
type SummaryRequest struct {
	Region    string
	Content   string
	MaxTokens int
	Counter   TokenCounter
}

// Extractive is the default summariser: deterministic and extractive. It
// keeps the most informative lines (first lines of each block, identifiers,
// errors, decisions, numbers) in their original order, within the budget.
// Same input, same summary.
type Extractive struct{}

var errNothingToSummarise = errors.New("nothing to summarise")

// scratchPool holds Summarize's buffers (a Context keeps its own), so that
// a caller summarising often does not grow them again at every call.
var scratchPool = sync.Pool{New: func() any { return new(sumScratch) }}

// Summarize implements Summarizer.
func (Extractive) Summarize(req SummaryRequest) (string, error) {
	sc := scratchPool.Get().(*sumScratch)
	defer scratchPool.Put(sc)
	clear(sc.runCutTokens[:]) // counted by the last call's counter
	counter := req.Counter
	if counter == nil {
		counter = BytesPerFour{}
	}
	// Runs of filler written out or encoded are alike once canonical.
	sc.lines = sc.scanLines(canonicalRuns(req.Content), counter, &sc.scanSeen, sc.lines[:0])
	sc.scanSeen.reset()
	sc.starts = append(sc.starts[:0], 0)
	s, err := sc.pick(req.Region, req.MaxTokens, counter, sc.lines, sc.starts, false, "", nil)
	// Emptied so that the buffers hold no content between calls.
	clear(sc.lines)
	sc.own = strings.Builder{}
	return s, err
}

// sumLine is one non-blank line as the Extractive summariser sees it. An
// entry's lines are scanned once and kept with the entry, so content that
// is summarised again (summaries folded into one) is not scored again; a
// summary's own lines are known when it is made, and kept with its entry.
type sumLine struct {
	key    string // the trimmed line, for dropping repeats
	hash   uint64 // lineHash(key, run), so that a set of lines need not hash it again
	score  int32  // lineScore(key), without the block-start bonus
	tokens int32  // the tokens of text and its newline
	cut    int32  // text is key[:cut] and tail's filler, with "…" after it when cut < len(key)
	first  bool   // a blank line or the content's start comes before it
	run    bool   // key is one byte repeated: repeats are found by byte and length
	bonus  bool   // pick: the block-start bonus was added to score
	fill   bool   // key may hold encoded runs: it is longer written out (else it is not)
}

// extra is how much longer the line's key is written out (TextLen).
func (l *sumLine) extra() int {
	if !l.fill {
		return 0
	}
	return TextLen(l.key) - len(l.key)
}

// cutRunExtra is how much longer cutRunText is written out.
var cutRunExtra = TextLen(cutRunText) - len(cutRunText)

// text is the line as a summary shows it: cut to 400 bytes, "…" marking the cut.
func (l *sumLine) text() string {
	if int(l.cut) == len(l.key) {
		return l.key
	}
	return withFiller(l.key[:l.cut], l.tail()) + "…"
}

// maxLineBytes is where a summary cuts a long line.
const maxLineBytes = 400

// cutRunText is the text of a cut line that is one encoded run.
var cutRunText = string(AppendFiller(nil, maxLineBytes)) + "…"

// tail is the filler a cut line keeps after key[:cut]: the start of the
// encoded run that the cut fell in.
func (l *sumLine) tail() int { return runTail(l.key, int(l.cut), maxLineBytes) }

// sumScratch holds the Extractive summariser's buffers, which a Context
// reuses from one compaction to the next.
type sumScratch struct {
	lines  []sumLine
	starts []int32 // where each entry's lines start in lines
	// The lines seen: of one content (few), and of all the candidates (a
	// set apart, as clearing a map costs its capacity).
	scanSeen, seen seenSet
	order          []int32
	keep           []bool
	at             []int32 // pick: where each of the summary's lines starts in it
	lower          []byte
	runScores      [256]int8 // a run line's score by its byte, plus 1 (0: not yet known)
	// runSumLine of an encoded run cut (longer than maxLineBytes), but its
	// key and hash; run is false until it is known.
	cutFill sumLine
	// A cut run line's tokens by its byte, plus 1 (0: not yet known): the
	// cut text depends on the byte alone. Counted with the Context's counter,
	// or the one of the current Summarize call.
	// An encoded run's at runMark.
	runCutTokens [256]int32
	// The summary line of a cut ASCII run line (the byte 400 times, then
	// "…") by its byte, but its key: it depends on the byte alone; an
	// encoded run's is the last. Counted with the Context's counter; a
	// Summarize call makes none.
	cutRuns     [utf8RuneSelf + 1]sumLine
	cutRunKnown [utf8RuneSelf + 1]bool
	ents        []*entry
	// The lines of entries let go of (emptied), for summaryLines to reuse.
	rooms [][]sumLine
	// The lines of the last summary pick made, and that summary: the
	// entry that stores it takes them (summaryEntry).
	made     []sumLine
	madeText string
	madeLen  int // TextLen(madeText), worked out as pick writes it
	// The last summary Context.summarize returned and its TextLen, counted
	// once for its event and its entry (BytesPerFour).
	sumText string
	sumSize int
	flags   []uint8 // pick: foldClasses' flags
	scores  []byte  // pick: foldClasses' scores, when it counts them
	// The last folded summary stored (appendHistory), and where each of
	// its lines starts in it, for the next fold (pick's src).
	fold struct {
		text string
		at   []int32
		// What foldClasses.count finds in its lines, if the pick that
		// made them worked it out (counted.ok).
		counted foldCounts
	}
	// madeCounts is fold.counted of the lines of the last summary pick
	// made, when it took them from a fold's src by class.
	madeCounts foldCounts
	// A fold's summary is written to into, its history's chunk slab,
	// after intoHead, the heading of the history's first chunk
	// (summaryBuf); else pick writes to own.
	into     *strings.Builder
	intoHead string
	own      strings.Builder
	// The summary lines of the last two headers made (a region and its
	// history take turns). Counted with the Context's counter; a
	// Summarize call makes none.
	headers [2]sumLine
}

// headerLine is the summary line of header, scored once per region: its
// key is header.
func (sc *sumScratch) headerLine(header string, counter TokenCounter) sumLine {
	if sc.headers[0].key == header {
		return sc.headers[0]
	}
	if sc.headers[1].key != header {
		sc.headers[1] = sc.newSumLine(header, "", lineHash(header, runLen{}), runLen{}, true, counter)
	}
	sc.headers[0], sc.headers[1] = sc.headers[1], sc.headers[0]
	return sc.headers[0]
}

// summaryHeader is pick's header for region and its tokens with a newline:
// those of a header line made before (headerLine) if made, so that a
// Context's summaries do not build and count it again.
func (sc *sumScratch) summaryHeader(region string, counter TokenCounter, made bool) (string, int) {
	const open = "[summary of "
	if made {
		for i := range sc.headers {
			h := &sc.headers[i]
			if k := h.key; len(k) == len(open)+len(region)+1 && int(h.cut) == len(k) && k[len(open):len(k)-1] == region {
				return k, int(h.tokens)
			}
		}
	}
	header := open + region + "]"
	return header, counter.Count(header + "\n")
}

// newSumLine scores line (trimmed, not blank) as scanLines keeps it. nl is
// line with the newline after it, if the content has them so (else ""): a
// counter other than BytesPerFour counts them without a copy. If line is a
// run line, rl is its byte and length (runLine), else zero.
func (sc *sumScratch) newSumLine(line, nl string, hash uint64, rl runLen, first bool, counter TokenCounter) sumLine {
	var s, size int
	run := rl.n > 0
	enc := run && rl.c != line[0] // line is one encoded run
	if run {
		// As lineScore cuts it (without comparing it again): the score
		// depends only on the byte, so it is worked out once per byte.
		c := rl.c
		size = rl.n
		if sc.runScores[c] == 0 {
			s, sc.lower = lineScore(strings.Repeat(string(rune(c)), 8), sc.lower)
			sc.runScores[c] = int8(s) + 1
		}
		s = int(sc.runScores[c]) - 1
	} else if (len(line) <= 8 || line[1] != line[0]) && isASCII(line) {
		// As lineScore scores it: no run to shorten, and no runMark, so
		// its length is its size.
		s = scoreASCII(line)
		size = len(line)
	} else {
		s, sc.lower = lineScore(line, sc.lower)
		size = TextLen(line)
	}
	l := sumLine{key: line, hash: hash, score: int32(s), cut: int32(len(line)), first: first, run: run, fill: run || size != len(line)}
	kept := size
	if size > maxLineBytes {
		switch {
		case enc:
			// The cut falls in the run: 400 bytes of it are kept.
			l.cut, kept = 0, maxLineBytes
		case HasFiller(line):
			l.cut = int32(cutRunAt(line, maxLineBytes))
			kept = TextLen(line[:l.cut]) + l.tail()
		default:
			l.cut = int32(len(truncateUTF8(line, maxLineBytes)))
			kept = int(l.cut)
		}
	}
	switch _, ok := counter.(BytesPerFour); {
	case ok:
		n := kept + len("\n")
		if int(l.cut) < len(line) {
			n += len("…")
		}
		l.tokens = int32(lenTokens(n))
	case run && int(l.cut) < len(line):
		c := line[0]
		if enc {
			c = runMark
		}
		if sc.runCutTokens[c] == 0 {
			sc.runCutTokens[c] = int32(counter.Count(l.text()+"\n")) + 1
		}
		l.tokens = sc.runCutTokens[c] - 1
	case int(l.cut) < len(line):
		l.tokens = int32(counter.Count(l.text() + "\n"))
	case nl != "":
		l.tokens = int32(counter.Count(nl))
	default:
		l.tokens = int32(counter.Count(line + "\n"))
	}
	return l
}

// runSumLine is newSumLine(line, _, hash, runLen{FillerByte, n}, first,
// BytesPerFour{}) for line one encoded run of n bytes of filler.
func (sc *sumScratch) runSumLine(line string, hash uint64, n int, first bool) sumLine {
	if sc.runScores[FillerByte] == 0 {
		s, _ := lineScore(strings.Repeat(string(rune(FillerByte)), 8), nil)
		sc.runScores[FillerByte] = int8(s) + 1
	}
	l := sumLine{key: line, hash: hash, score: int32(sc.runScores[FillerByte]) - 1, cut: int32(len(line)), first: first, run: true, fill: true}
	kept := n + len("\n")
	if n > maxLineBytes {
		// The cut falls in the run: 400 bytes of it are kept, and "…".
		l.cut, kept = 0, maxLineBytes+len("\n")+len("…")
	}
	l.tokens = int32(lenTokens(kept))
	return l
}

// runLen is a run line's byte and length in bytes, encoded or not; n is 0
// for a line that is not one.
type runLen struct {
	c byte
	n int
}

// runLine is line's byte and length if it is one byte repeated, longer than
// 8 bytes, or one encoded run; else zero. Its first two bytes are compared
// first: most lines differ there, and are told without a call.
func runLine(line string) runLen {
	if len(line) > 8 && line[1] == line[0] && line[1:] == line[:len(line)-1] {
		return runLen{line[0], len(line)}
	}
	if n, ok := fillerLine(line); ok {
		return runLen{FillerByte, n}
	}
	return runLen{}
}

// runOf is the byte and length of run line (runLine), encoded or not.
func runOf(line string) (byte, int) {
	if n, ok := fillerLine(line); ok {
		return FillerByte, n
	}
	return line[0], len(line)
}

// lineSeed seeds the hashes of lines; a line's hash is only compared with
// others of the same process.
var lineSeed = maphash.MakeSeed()

// lineHash hashes a line for seenSet: a run line (one byte repeated, rl its
// byte and length) by its byte and length, so that long runs are not hashed.
func lineHash(line string, rl runLen) uint64 {
	if rl.n > 0 {
		return runHash(rl)
	}
	if n := len(line); n >= 8 && n <= 24 {
		// Three words that cover the line, mixed by two products: most
		// lines but runs are short, and this costs less than maphash.
		a, b, c := le64(line), le64(line[n/2-4:]), le64(line[n-8:])
		h, l := bits.Mul64(a^0x9E3779B97F4A7C15, b^0xC2B2AE3D27D4EB4F)
		h, l = bits.Mul64(c^uint64(n)^h, l^0x165667B19E3779F9)
		return h ^ l
	}
	return maphash.String(lineSeed, line)
}

// runHash is lineHash of a run line.
func runHash(rl runLen) uint64 {
	// The product's high bits are mixed into the low ones, which place it
	// in the table.
	h := (uint64(rl.n)<<8 | uint64(rl.c)) * 0x9E3779B97F4A7C15
	return h ^ h>>32
}

// seenSet holds the lines seen so far, to drop repeats: an open-addressing
// table of lines and their hashes, which lines keep once computed, so that
// a line folded again is not hashed again (lines can be kilobytes long).
type seenSet struct {
	slots []seenSlot // a power of two of them, at most half full
	used  []int32    // the slots filled, to empty them
	// Runs of FillerByte shorter than maxFillBit bytes (most run lines),
	// a bit by length: seen without a probe or a comparison.
	fill    []uint64
	fillSet bool
}

// maxFillBit bounds the runs seenSet.fill holds.
const maxFillBit = 1 << 13

type seenSlot struct {
	key  string
	hash uint64
	at   int32 // foldLines: the index of the line
	full bool
	run  bool
}

// add records line (with hash lineHash(line, run)) as seen and reports
// whether it was new.
func (s *seenSet) add(line string, hash uint64, run bool) bool {
	if run {
		c, n := runOf(line)
		return s.addRun(runLen{c, n}, line, hash)
	}
	return s.addSlot(line, hash, false)
}

// addRun is add for run line line, of byte and length rl.
func (s *seenSet) addRun(rl runLen, line string, hash uint64) bool {
	if rl.c == FillerByte && rl.n < len(s.fill)*64 {
		w := &s.fill[rl.n>>6]
		old := *w
		*w |= 1 << (rl.n & 63)
		s.fillSet = true
		return *w != old
	}
	return s.addRunSlot(rl, line, hash)
}

// addRunSlot is addRun for a run that fill does not hold: it makes fill
// first if it should.
func (s *seenSet) addRunSlot(rl runLen, line string, hash uint64) bool {
	if rl.c == FillerByte && rl.n < maxFillBit {
		s.fill = make([]uint64, maxFillBit/64)
		return s.addRun(rl, line, hash)
	}
	return s.addSlot(line, hash, true)
}

// addSlot is add placing line in the table, whatever it is: foldLines
// finds the lines of its set by their slots.
func (s *seenSet) addSlot(line string, hash uint64, run bool) bool {
	if 2*(len(s.used)+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := hash & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if !sl.full {
			*sl = seenSlot{key: line, hash: hash, full: true, run: run}
			s.used = append(s.used, int32(i))
			return true
		}
		// Run lines are equal if their byte and length are.
		if sl.hash == hash && sl.run == run && (run && sameRun(sl.key, line) || !run && sl.key == line) {
			return false
		}
	}
}

// sameRun reports whether run lines a and b are alike.
func sameRun(a, b string) bool {
	if len(a) == len(b) && a[0] == b[0] && a[0] != runMark {
		return true
	}
	ca, na := runOf(a)
	cb, nb := runOf(b)
	return ca == cb && na == nb
}

// grow doubles the table (at least 64 slots), placing the lines by their
// hashes again.
func (s *seenSet) grow() {
	old := s.slots
	s.slots = make([]seenSlot, max(2*len(old), 64))
	mask := uint64(len(s.slots) - 1)
	for k, j := range s.used {
		sl := old[j]
		i := sl.hash & mask
		for s.slots[i].full {
			i = (i + 1) & mask
		}
		s.slots[i] = sl
		s.used[k] = int32(i)
	}
}

// appendNew appends to out the lines not seen yet, and adds them; a line
// left out leaves first to the next, as a repeat scanLines skips does.
func (s *seenSet) appendNew(out, lines []sumLine) []sumLine {
	first := false
	for _, l := range lines {
		first = first || l.first
		if s.add(l.key, l.hash, l.run) {
			l.first, first = first, false
			out = append(out, l)
		}
	}
	return out
}

// find is the slot holding a line equal to line (with hash lineHash(line,
// run)), or -1.
func (s *seenSet) find(line string, hash uint64, run bool) int {
	if len(s.slots) == 0 {
		return -1
	}
	mask := uint64(len(s.slots) - 1)
	for i := hash & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if !sl.full {
			return -1
		}
		if sl.hash == hash && sl.run == run && (run && sameRun(sl.key, line) || !run && sl.key == line) {
			return int(i)
		}
	}
}

// foldLines appends to buf, which holds the first of entries' lines
// (their lines scanned; the first's have no repeats, as scanLines and
// summaryLines make them), the others' as appendNew would, and their starts
// to starts. The first entry's lines are all new: only the few lines of the
// others go into a set, in which each of the first's is looked for.
func (sc *sumScratch) foldLines(buf []sumLine, starts []int32, entries []*entry) ([]sumLine, []int32) {
	set := &sc.scanSeen
	drop := sc.keep[:0] // a later line is a repeat
	rest := entries[1:]
	// A bit per line of the set, by its hash's top bits: most of the
	// first's lines are in no other, and the bit tells them apart.
	var bloom [8]uint64
	for _, e := range rest {
		for i := range e.lines {
			l := &e.lines[i]
			added := set.addSlot(l.key, l.hash, l.run)
			if added {
				set.slots[set.used[len(set.used)-1]].at = int32(len(drop))
				bloom[l.hash>>61] |= 1 << (l.hash >> 55 & 63)
			}
			drop = append(drop, !added)
		}
	}
	if len(set.used) > 0 {
		lines := buf
		for j := range lines {
			l := &lines[j]
			if bloom[l.hash>>61]&(1<<(l.hash>>55&63)) == 0 {
				continue
			}
			if i := set.find(l.key, l.hash, l.run); i >= 0 {
				drop[set.slots[i].at] = true
			}
		}
	}
	set.reset()
	starts = append(starts, 0)
	k := 0
	for _, e := range rest {
		starts = append(starts, int32(len(buf)))
		first := false
		for _, l := range e.lines {
			first = first || l.first
			if !drop[k] {
				l.first, first = first, false
				buf = append(buf, l)
			}
			k++
		}
	}
	sc.keep = drop
	return buf, starts
}

// reset empties the set, so that it holds no content between calls.
func (s *seenSet) reset() {
	for _, i := range s.used {
		s.slots[i] = seenSlot{}
	}
	s.used = s.used[:0]
	if s.fillSet {
		clear(s.fill)
		s.fillSet = false
	}
}

// scanLines appends content's non-blank lines to out, scored, but for those
// in seen already, and adds them to seen.
func (sc *sumScratch) scanLines(content string, counter TokenCounter, seen *seenSet, out []sumLine) []sumLine {
	_, bpf := counter.(BytesPerFour)
	first := true
	for at := 0; at < len(content); {
		// A run of two digits is read inline (most); a line that does not
		// start with runMark holds none.
		n, size := twoDigitRun(content[at:]), 4
		if n == 0 && content[at] == runMark {
			n, size = parseRunDigits(content[at:])
		}
		if n > 0 && bpf && (at+size == len(content) || content[at+size] == '\n') {
			// One encoded run, most lines of elided content: taken as
			// the code below would (newSumLine's case of it inlined).
			line := content[at : at+size]
			at += size + 1
			rl := runLen{FillerByte, n}
			h := runHash(rl)
			if n < len(seen.fill)*64 {
				// addRun's bit, without a call: most runs.
				w := &seen.fill[n>>6]
				if *w&(1<<(n&63)) != 0 {
					continue
				}
				*w |= 1 << (n & 63)
				seen.fillSet = true
			} else if !seen.addRun(rl, line, h) {
				continue
			}
			if n > maxLineBytes {
				// Cut: all such lines are alike but for these.
				if !sc.cutFill.run {
					sc.cutFill = sc.runSumLine("", 0, n, false)
				}
				l := sc.cutFill
				l.key, l.hash, l.first = line, h, first
				out = append(out, l)
			} else {
				out = append(out, sc.runSumLine(line, h, n, first))
			}
			first = false
			continue
		}
		end := strings.IndexByte(content[at:], '\n')
		if end < 0 {
			end = len(content)
		} else {
			end += at
		}
		raw := content[at:end]
		at = end + 1
		var rl runLen
		line := raw
		if k := len(raw) - 1; k >= 0 && ' ' < raw[0] && raw[0] < utf8RuneSelf && ' ' < raw[k] && raw[k] < utf8RuneSelf && (k < 8 || raw[1] != raw[0]) {
			// Nothing to trim (ASCII but for spaces at its ends), and not
			// one byte repeated nor an encoded run: most lines but runs.
		} else if n, ok := fillerLine(raw); ok {
			// One encoded run (elided content's lines): nothing to trim.
			rl = runLen{FillerByte, n}
		} else {
			line = strings.TrimSpace(raw)
			if line == "" {
				first = true
				continue
			}
			rl = runLine(line)
		}
		// A repeat can never be kept (its first occurrence comes before
		// it), so it is not scored; it leaves first as it was.
		h := lineHash(line, rl)
		if rl.n > 0 && !seen.addRun(rl, line, h) || rl.n == 0 && !seen.addSlot(line, h, false) {
			continue
		}
		nl := ""
		if c := raw[len(raw)-1]; end < len(content) && (' ' < c && c < utf8RuneSelf || c == runMark) {
			// Not trimmed at its end (ASCII spaces are at most ' '):
			// the content has the line and its newline.
			nl = content[end-len(line) : end+1]
		}
		out = append(out, sc.newSumLine(line, nl, h, rl, first, counter))
		first = false
	}
	return out
}

// pick keeps the best of cands (the lines of entries joined by blank
// lines, each entry's starting at its starts; no line is in two) in their
// order, within the budget: the Extractive summary. It adds the block-start
// bonus to cands' scores. If made, it leaves the summary's own
// lines, as scanLines would find them, in sc.made, and where each starts
// in it in sc.at.
//
// src is "" or the first entry's text, a summary pick made whose lines
// (cands up to starts[1]) start in it at srcAt: a fold's folded summary.
// Its lines are most of a fold's and nearly all are kept, so they are
// taken by score class (foldClasses) and copied in runs, not one by one.
func (sc *sumScratch) pick(region string, maxTokens int, counter TokenCounter, cands []sumLine, starts []int32, made bool, src string, srcAt []int32) (string, error) {
	sc.made, sc.madeText, sc.madeLen = nil, "", -1
	sc.madeCounts.ok = false
	header, headerTokens := sc.summaryHeader(region, counter, made)
	budget := maxTokens - headerTokens
	if budget <= 0 {
		return "", errors.New("summary budget too small")
	}
	// cands[1:nsrc] are src's lines but its header: no bonus is theirs.
	var fc foldClasses
	nsrc := 0
	if made && src != "" && len(starts) > 1 && starts[0] == 0 && int(starts[1]) == len(srcAt) && len(srcAt) > 1 {
		sc.flags = slices.Grow(sc.flags[:0], len(srcAt))[:len(srcAt)]
		fc.flags = sc.flags
		if fk := &sc.fold.counted; fk.ok && fk.header == header && len(fk.flags) == len(srcAt) {
			// The fold before made src, and counted its lines.
			fc.classTally = fk.classTally
			copy(fc.flags, fk.flags)
			fc.scores = fk.scores
			nsrc = len(srcAt)
		} else {
			sc.scores = slices.Grow(sc.scores[:0], len(srcAt))[:len(srcAt)]
			if fc.scores = sc.scores; fc.count(cands, srcAt, header) {
				nsrc = len(srcAt)
			}
		}
	}
	firstOfBlock, g := true, 0
	for i := 0; i < len(cands); i++ {
		if i == 1 && nsrc > 1 {
			i = nsrc - 1
			continue
		}
		for g < len(starts) && int(starts[g]) == i {
			firstOfBlock = true // entries are joined by a blank line
			g++
		}
		if l := &cands[i]; l.first || firstOfBlock {
			l.score += 4
			l.bonus = true
			firstOfBlock = false
		}
	}
	if len(cands) == 0 {
		return "", errNothingToSummarise
	}
	keep := slices.Grow(sc.keep[:0], len(cands))[:len(cands)]
	clear(keep)
	sc.keep = keep
	used, bytes, kept := 0, len(header), 0
	var order []int32
	if nsrc > 1 && !fc.keep(cands, nsrc, keep, budget, &used, &bytes, &kept) {
		nsrc = 0
	}
	if nsrc <= 1 {
		order = sortByScore(sc.order[:0], cands)
		sc.order = order
		for _, i := range order {
			if c := &cands[i]; used+int(c.tokens) <= budget {
				keep[i] = true
				used += int(c.tokens)
				bytes += c.size()
				kept++
			}
		}
	}
	made = made && used > 0
	// The counts of the lines made (but the header), for the next fold,
	// when src's lines go by class: src's, less those not made as they
	// are, and the lines put.
	var nx *foldCounts
	nend := int32(-1) // as count's end
	if made && nsrc > 1 {
		nx = &sc.madeCounts
		nx.classTally = fc.classTally
		nx.flags = append(nx.flags[:0], 0)
		nx.scores = append(nx.scores[:0], noScore)
		nx.header, nx.ok = header, true
	}
	b := sc.summaryBuf(bytes)
	b.WriteString(header)
	// How much longer the summary is written out: the lines that hold
	// runs add theirs as they are written, so that it is not scanned.
	ext := 0
	if made {
		ext = TextLen(header) - len(header)
	}
	// Lines take their keys from the summary as it is written: they are
	// in its array while the Builder does not grow it (its Cap stays).
	grown := b.Cap()
	var lines []sumLine
	at := sc.at[:0] // where each of lines starts in the summary
	if made {
		// The summary's lines as scanLines would scan them: its header,
		// then the kept lines but for repeats of cut lines.
		lines = sc.lineRoom(kept + 1)
		h := sc.headerLine(header, counter)
		sc.seen.add(header, h.hash, false)
		lines = append(lines, h)
		lines[0].key = b.String()
		at = append(at, 0)
	}
	// An encoded run line cut (most cut lines) is always cutRunText, a
	// repeat once seen has it.
	cutRunSeen := false
	// put writes kept candidate c, and its summary line if made.
	put := func(c *sumLine) {
		b.WriteByte('\n')
		from := b.Len()
		if c.cut == 0 && c.run {
			b.WriteString(cutRunText)
			ext += cutRunExtra
			if made && !cutRunSeen {
				if l, ok := sc.cutLine(c, b.String()[from:], counter); ok {
					lines = append(lines, l)
					at = append(at, int32(from))
					if nx != nil {
						nend = nx.add(&lines[len(lines)-1], from, nend, header)
					}
				}
				cutRunSeen = true // cutLine added it to seen
			}
			return
		}
		b.WriteString(c.key[:c.cut])
		if int(c.cut) < len(c.key) {
			if n := c.tail(); n > 0 {
				var buf [8]byte
				b.Write(AppendFiller(buf[:0], n))
			}
			b.WriteString("…")
		}
		if !made {
			return
		}
		if int(c.cut) == len(c.key) {
			ext += c.extra()
			// The line itself, scored when it was scanned; its key is
			// taken from the summary, so that the entry it came from is
			// not kept. Candidates' keys differ, so it can only repeat
			// the header or a cut line (which ends with "…").
			if c.key != header && (!strings.HasSuffix(c.key, "…") || sc.seen.add(c.key, c.hash, c.run)) {
				l := *c
				l.key = b.String()[from:]
				if l.bonus {
					l.score -= 4
				}
				l.first, l.bonus = false, false
				lines = append(lines, l)
				at = append(at, int32(from))
				if nx != nil {
					nend = nx.add(&lines[len(lines)-1], from, nend, header)
				}
			}
			return
		}
		cut := b.String()[from:]
		ext += TextLen(cut) - len(cut)
		if l, ok := sc.cutLine(c, cut, counter); ok {
			lines = append(lines, l)
			at = append(at, int32(from))
			if nx != nil {
				nend = nx.add(&lines[len(lines)-1], from, nend, header)
			}
		}
	}
	for i := 0; i < len(cands); i++ {
		if i == 1 && nsrc > 1 {
			// src's kept lines: most are the line itself and follow each
			// other in src as put writes them, and are their own summary
			// lines (no bonus was added to them): they go in runs.
			seg := 1 // the run cands[seg:i] is yet to be written
			for ; i <= nsrc; i++ {
				f := uint8(flagPut) // the end of the lines
				if i < nsrc {
					if i = nextFlag(fc.flags[:nsrc], i); i < nsrc {
						f = fc.flags[i]
					}
				}
				if seg < i {
					q, end := int(srcAt[seg])-1, int(srcAt[i-1])+len(cands[i-1].key)
					d := int32(b.Len() - q)
					b.WriteString(src[q:end])
					bs := b.String()
					lines = append(lines, cands[seg:i]...)
					run := lines[len(lines)-(i-seg):]
					a0 := len(at)
					at = append(at, srcAt[seg:i]...)
					as := at[a0:]
					run = run[:len(as)]
					for j := range run {
						l := &run[j]
						a := int(as[j] + d)
						as[j] = int32(a)
						l.key = bs[a : a+len(l.key)]
						if l.fill {
							ext += l.extra()
						}
					}
					if nx != nil {
						// Lines of src that follow each other in it
						// follow each other here.
						nx.scores = append(nx.scores, fc.scores[seg:i]...)
						k := len(nx.flags)
						nx.flags = slices.Grow(nx.flags, i-seg)[:k+i-seg]
						clear(nx.flags[k:])
						if at[k]-1 != nend {
							nx.flags[k] = flagRun
						}
						nend = int32(end) + d
					}
				}
				switch {
				case f&flagDrop != 0:
					if nx != nil && i < nsrc {
						nx.sub(&cands[i])
					}
					seg = i + 1
				case f&flagPut != 0:
					if i < nsrc {
						if nx != nil {
							nx.sub(&cands[i])
						}
						put(&cands[i])
					}
					seg = i + 1
				default: // flagRun
					seg = i
				}
			}
			i = nsrc - 1
			continue
		}
		if keep[i] {
			put(&cands[i])
		}
	}
	sc.at = at
	if used == 0 {
		if order == nil {
			order = sortByScore(sc.order[:0], cands)
			sc.order = order
		}
		// Not even one line fits: keep the head of the best line.
		b.WriteByte('\n')
		b.WriteString(truncateUTF8(cands[order[0]].text(), max(budget*4-4, 0)))
		return b.String(), nil
	}
	s := b.String()
	if made {
		sc.seen.reset()
		if b.Cap() != grown {
			// The keys taken before it grew are in the array it left.
			for k := range lines {
				l := &lines[k]
				l.key = s[at[k] : int(at[k])+len(l.key)]
			}
		}
		sc.made, sc.madeText, sc.madeLen = lines, s, len(s)+ext
		if nx != nil && len(nx.flags) != len(lines) {
			nx.ok = false
		}
	}
	return s, nil
}

// sumBuf is where pick writes a summary: a Builder, from base on.
type sumBuf struct {
	sb   *strings.Builder
	base int
}

func (b sumBuf) Len() int               { return b.sb.Len() - b.base }
func (b sumBuf) Cap() int               { return b.sb.Cap() }
func (b sumBuf) String() string         { return b.sb.String()[b.base:] }
func (b sumBuf) WriteString(s string)   { b.sb.WriteString(s) }
func (b sumBuf) WriteByte(c byte) error { return b.sb.WriteByte(c) }
func (b sumBuf) Write(p []byte)         { b.sb.Write(p) }

// summaryBuf is an empty sumBuf with room for n bytes: a new Builder of
// its own, or, for a fold (into), the history's chunk slab after the
// heading of its first chunk, with the room renderChunked leaves an open
// chunk, so that the chunk is the text pick writes and is not copied.
func (sc *sumScratch) summaryBuf(n int) sumBuf {
	sb := sc.into
	if sb == nil {
		sc.own = strings.Builder{}
		sc.own.Grow(n)
		return sumBuf{&sc.own, 0}
	}
	if need := len(sc.intoHead) + n + CacheChunkTokens*4; sb.Cap()-sb.Len() < need {
		*sb = strings.Builder{} // a new slab (growing would copy the old)
		sb.Grow(max(chunkSlabBytes, need))
	}
	sb.WriteString(sc.intoHead)
	return sumBuf{sb, sb.Len()}
}

// nextFlag is the index of the first non-zero flag from i on, len(flags)
// if none: most lines of a folded summary have none, and are skipped eight
// at a time.
func nextFlag(flags []uint8, i int) int {
	for ; i+8 <= len(flags); i += 8 {
		if w := binary.LittleEndian.Uint64(flags[i:]); w != 0 {
			return i + bits.TrailingZeros64(w)/8
		}
	}
	for ; i < len(flags); i++ {
		if flags[i] != 0 {
			break
		}
	}
	return i
}

// foldCounts are what foldClasses.count finds in a summary's lines (but
// its header): the fold that made them works them out from its src's, at
// the cost of the lines it does not take in runs.
type foldCounts struct {
	classTally
	flags  []uint8 // by line; the header's is 0
	scores []byte  // by line, for keep to find a score's lines; the header's is noScore
	header string  // the header count compares lines with
	ok     bool
}

// sub takes a line of src that is not made as it is out of the counts.
func (k *foldCounts) sub(l *sumLine) {
	k.tokens[l.score] -= int(l.tokens)
	k.bytes[l.score] -= l.size()
	k.n[l.score]--
}

// add counts line l, made at at after lines ending at end (-1: after a
// line that is put), and flags it as count would; it returns where the
// next line must start less one to follow it.
func (k *foldCounts) add(l *sumLine, at int, end int32, header string) int32 {
	f, end, ok := k.tally(l, int32(at), end, header)
	if !ok {
		k.ok = false
		return -1
	}
	k.flags = append(k.flags, f)
	k.scores = append(k.scores, byte(l.score))
	return end
}

// classTally is the tokens, bytes in a summary and number of a folded
// summary's lines, by score.
type classTally struct {
	tokens, bytes, n [maxScore + 1]int
}

// tally counts line l, which starts in src at at after a line ending at
// end (-1: one that is put), and returns its flags and where the next line
// must start less one to follow it; false if the line is not as pick made
// it (a bonus, or the first line, which would take one).
func (t *classTally) tally(l *sumLine, at, end int32, header string) (uint8, int32, bool) {
	if l.first || l.bonus || l.score < 0 || l.score > maxScore {
		return 0, -1, false
	}
	t.tokens[l.score] += int(l.tokens)
	t.bytes[l.score] += l.size()
	t.n[l.score]++
	switch {
	case int(l.cut) != len(l.key) || l.key == header || strings.HasSuffix(l.key, "…"):
		return flagPut, -1, true
	case at-1 != end:
		return flagRun, at + int32(len(l.key)), true
	}
	return 0, at + int32(len(l.key)), true
}

// foldClasses are a folded summary's lines (but its header) by score:
// their tokens, their bytes in a summary and their number, and which
// classes a fold keeps whole; and what stops a run of them (flags).
type foldClasses struct {
	classTally
	all    [maxScore + 1]bool
	flags  []uint8 // by index in cands
	scores []byte  // by index in cands: cands[i].score
}

// noScore is foldClasses.scores' entry for a header: no score is it.
const noScore = 0xFF

// maxScore is the highest score of a line, the block-start bonus added.
const maxScore = 12 + 4

// What stops a run of a folded summary's lines.
const (
	flagRun  = 1 << iota // a run starts at the line: it does not follow the one before in src
	flagPut              // the line is not itself in a summary, or is a repeat if it is: pick puts it
	flagDrop             // the line is not kept
)

// count adds up the lines cands[1:len(at)], which start in src at at, by
// score and flags them. It reports whether they are as pick made them (no
// bonus, and no first line, which would take one).
func (fc *foldClasses) count(cands []sumLine, at []int32, header string) bool {
	end := int32(-1) // where the line before ends in src, if it is not put
	fc.scores[0] = noScore
	for i := 1; i < len(at); i++ {
		f, e, ok := fc.tally(&cands[i], at[i], end, header)
		if !ok {
			return false
		}
		fc.flags[i], end = f, e
		fc.scores[i] = byte(cands[i].score)
	}
	return true
}

// keep is pick's choice for cands whose lines 1 to nsrc are counted in fc:
// by score, highest first, and in their order within a score, each line
// that fits is kept. The counted lines of a score come together, so if they
// all fit they are kept at once (fc.all); else those left out are flagged.
// It adds the tokens, bytes and lines kept to used, size and kept; false
// (and nothing done) if a score of the other lines is out of its range.
func (fc *foldClasses) keep(cands []sumLine, nsrc int, keep []bool, budget int, used, size, kept *int) bool {
	// The scores of the other lines.
	if s := cands[0].score; s < 0 || s > maxScore {
		return false
	}
	var present uint32
	for i := nsrc; i < len(cands); i++ {
		s := cands[i].score
		if s < 0 || s > maxScore {
			return false
		}
		present |= 1 << s
	}
	take := func(i int) bool {
		c := &cands[i]
		if *used+int(c.tokens) > budget {
			return false
		}
		keep[i] = true
		*used += int(c.tokens)
		*size += c.size()
		*kept++
		return true
	}
	for s := int32(maxScore); s >= 0; s-- {
		if cands[0].score == s {
			take(0)
		}
		if fc.n[s] > 0 {
			if *used+fc.tokens[s] <= budget {
				fc.all[s] = true
				*used += fc.tokens[s]
				*size += fc.bytes[s]
				*kept += fc.n[s]
			} else {
				// Taken in order, each if it fits: the class's bytes and
				// number, less those of the lines left out. Only the flags
				// of src's lines are read: keep is not set.
				u, nb, n := *used, fc.bytes[s], fc.n[s]
				for i, left := 1, fc.n[s]; left > 0; i, left = i+1, left-1 {
					if fc.scores[i] != byte(s) {
						// The next line of the score, after lines of
						// others: a search, as few may have it.
						k := bytes.IndexByte(fc.scores[i+1:nsrc], byte(s))
						if k < 0 {
							break
						}
						i += k + 1
					}
					c := &cands[i]
					if u+int(c.tokens) > budget {
						fc.flags[i] |= flagDrop
						nb -= c.size()
						n--
						continue
					}
					u += int(c.tokens)
				}
				*used, *size, *kept = u, *size+nb, *kept+n
			}
		}
		if present&(1<<s) != 0 {
			for i := nsrc; i < len(cands); i++ {
				if cands[i].score == s {
					take(i)
				}
			}
		}
	}
	return true
}

// size is the bytes the line takes in a summary, with the newline before it.
func (l *sumLine) size() int {
	switch {
	case int(l.cut) == len(l.key):
		return 1 + len(l.key)
	case l.cut == 0 && l.run:
		return 1 + len(cutRunText) // an encoded run cut
	}
	return 1 + int(l.cut) + len("…") // and the filler of a cut in a run
}

// sortByScore appends the indices of cands to order, highest score first
// and in their order among equal scores. Scores are small (lineScore's cap
// plus the block-start bonus), so it counts rather than compares.
func sortByScore(order []int32, cands []sumLine) []int32 {
	const top = 12 + 4
	var at [top + 2]int32 // where each score's indices start, highest first
	for i := range cands {
		s := cands[i].score
		if s < 0 || s > top {
			for i := range cands {
				order = append(order, int32(i))
			}
			slices.SortStableFunc(order, func(a, b int32) int { return int(cands[b].score - cands[a].score) })
			return order
		}
		at[top-s+1]++
	}
	for k := 1; k < len(at); k++ {
		at[k] += at[k-1]
	}
	order = slices.Grow(order, len(cands))[:len(cands)]
	for i := range cands {
		k := top - cands[i].score
		order[at[k]] = int32(i)
		at[k]++
	}
	return order
}

// cutLine is the summary line of kept candidate c, a cut line whose text
// in the summary is text, as scanLines would scan it; false if it repeats
// a line before it.
func (sc *sumScratch) cutLine(c *sumLine, text string, counter TokenCounter) (sumLine, bool) {
	b := int(c.key[0])
	if _, ok := fillerLine(c.key); ok {
		b = utf8RuneSelf
	}
	if c.run && b <= utf8RuneSelf {
		m := &sc.cutRuns[b]
		if !sc.cutRunKnown[b] {
			*m = sc.newSumLine(text, "", lineHash(text, runLen{}), runLen{}, false, counter)
			m.key, sc.cutRunKnown[b] = "", true
		}
		if !sc.seen.add(text, m.hash, false) {
			return sumLine{}, false
		}
		l := *m
		l.key = text
		return l, true
	}
	if text == c.key {
		// A line of a summary that is cut to itself (a cut run and its
		// "…", folded again): scanned, it is c, which was scanned so.
		if !sc.seen.add(text, c.hash, c.run) {
			return sumLine{}, false
		}
		l := *c
		l.key = text
		if l.bonus {
			l.score -= 4
		}
		l.first, l.bonus = false, false
		return l, true
	}
	rl := runLine(text)
	h := lineHash(text, rl)
	if !sc.seen.add(text, h, rl.n > 0) {
		return sumLine{}, false
	}
	return sc.newSumLine(text, "", h, rl, false, counter), true
}

// lineRoom is an empty slice with room for n lines: the smallest one an
// entry let go of that fits, else a new one with room to spare, as a
// history's folded summary grows at each fold: a power of two of lines,
// so that the room a fold lets go of serves the folds after it until the
// summary doubles (with n/4 to spare, each was new until it was full).
func (sc *sumScratch) lineRoom(n int) []sumLine {
	best := -1
	for i, r := range sc.rooms {
		if cap(r) >= n && (best < 0 || cap(r) < cap(sc.rooms[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]sumLine, 0, 1<<bits.Len(uint(n+n/4)))
	}
	r := sc.rooms[best]
	last := len(sc.rooms) - 1
	sc.rooms[best] = sc.rooms[last]
	sc.rooms[last] = nil
	sc.rooms = sc.rooms[:last]
	return r
}

// maxLineRooms caps the rooms kept for summaryLines.
const maxLineRooms = 8

var informative = []string{"error", "fail", "panic", "exception", "warning", "fatal", "decid", "decision", "must", "todo", "fix", "because", "result", "found", "conclusion", "summary", "important", "note"}

// lineScore rates a line: informative words, then each field (split at
// spaces and punctuation) that is a path or dotted name, an identifier, or
// holds a digit; capped at 12. ASCII lines, nearly all of them, take
// scoreASCII's table-driven passes; others one allocation-free pass, or the
// Unicode-aware scoreSlow, which defines the score.
func lineScore(line string, lower []byte) (int, []byte) {
	lower = lower[:0]
	if len(line) > 8 && line[1] == line[0] && line[1:] == line[:len(line)-1] {
		// One byte repeated (padding, rules, elided content's stand-in):
		// no informative word, at most one field, whose class is the same
		// from four bytes on. Comparing the line with itself shifted is
		// far faster than walking it.
		line = line[:8]
	} else if len(line) > 8 && runNeutral[line[0]] && line[1] == line[0] {
		// A run of a byte that is no letter, digit, separator nor path or
		// identifier mark, then more (a cut filler line and its "…"): the
		// run only starts the first field, so four bytes of it score alike.
		k := 2
		for k < len(line) && line[k] == line[0] {
			k++
		}
		if k > 4 {
			line = line[k-4:]
		}
	}
	if isASCII(line) {
		return scoreASCII(line), lower
	}
	if at, _, _ := NextFiller(line); at >= 0 {
		return lineScore(shortRuns(line), lower)
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c >= utf8RuneSelf:
			// Informative words are ASCII: any other character only
			// separates letters, as its lower case (non-ASCII) would.
			c = utf8RuneSelf
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	// Contains, not ContainsAny: with non-ASCII characters ContainsAny walks
	// the line rune by rune.
	if !utf8.ValidString(line) || strings.Contains(line, "\u212a") || strings.Contains(line, "\u0130") {
		return scoreSlow(line), lower
	}
	// One pass for all the informative words: at each byte, only the
	// words starting with it are compared (18 searches of the line cost
	// more, lines being short).
	var found uint32
	for i, c := range lower {
		for _, w := range informativeByFirst[c] {
			if found&(1<<w) == 0 && bytes.HasPrefix(lower[i:], informativeBytes[w]) {
				found |= 1 << w
			}
		}
	}
	s := 3 * bits.OnesCount32(found)
	if s >= 12 {
		return 12, lower
	}
	var path, ident, digit, upper bool // the current field's classes
	start, prev := -1, byte(0)
	for i := 0; i <= len(line); {
		r, size := rune(' '), 1
		if i < len(line) {
			if c := line[i]; c < utf8RuneSelf {
				r = rune(c)
			} else {
				r, size = utf8.DecodeRuneInString(line[i:])
			}
		}
		if r < utf8RuneSelf && fieldSep[r] || r >= utf8RuneSelf && unicode.IsSpace(r) {
			if start >= 0 {
				n := i - start
				switch {
				case path && n > 3 && prev != '.':
					s += 2
				case ident || upper:
					s += 2
				case digit:
					s++
				}
				if s >= 12 {
					return 12, lower
				}
				start = -1
			}
			i += size
			continue
		}
		if start < 0 {
			start, path, ident, digit, upper = i, false, false, false, false
		} else if 'A' <= r && r <= 'Z' || r >= utf8RuneSelf && unicode.IsUpper(r) {
			upper = true
		}
		switch {
		case r == '/' || r == '.':
			path = true
		case r == '_':
			ident = true
		case '0' <= r && r <= '9' || r >= utf8RuneSelf && unicode.IsDigit(r):
			digit = true
		}
		prev = line[i+size-1]
		i += size
	}
	return s, lower
}

// scoreASCII is lineScore for an ASCII line, a few table look-ups a byte,
// in one pass: an informative word is letters, so it starts inside a field
// at a byte before one that may be a word's second (classSecond).
func scoreASCII(line string) int {
	n := len(line)
	var found uint32 // the informative words found
	s := 0           // the fields' score
	for i := 0; i < n; {
		k := asciiClass[line[i]]
		if k&classSep != 0 {
			i++
			continue
		}
		// A field: its classes, an upper-case letter counting only
		// after its first byte.
		start, f := i, k&^classUpper
		for i++; i < n; i++ {
			k = asciiClass[line[i]]
			if k&classSep != 0 {
				break
			}
			f |= k
			if k&classSecond != 0 {
				found = wordsAt(line, i-1, found)
			}
		}
		switch {
		case f&classPath != 0 && i-start > 3 && line[i-1] != '.':
			s += 2
		case f&(classIdent|classUpper) != 0:
			s += 2
		case f&classDigit != 0:
			s++
		}
		if s+3*bits.OnesCount32(found) >= 12 {
			return 12
		}
	}
	return s + 3*bits.OnesCount32(found)
}

// wordsAt adds to found the informative words not in it that start at
// line[i] (in any case).
func wordsAt(line string, i int, found uint32) uint32 {
	// Or-ing 0x20 lowers ASCII letters and makes no other byte a lower-case
	// letter, and the words are lower-case letters.
	n := len(line)
	k := uint16(line[i]|0x20) | uint16(line[i+1]|0x20)<<8
	if wordStarts[k>>6]&(1<<(k&63)) == 0 {
		return found
	}
	cand := wordsByFirst[uint8(k)] &^ found
	if cand == 0 {
		return found
	}
	// Eight bytes from i (fewer at the end, as if zeros followed).
	var x uint64
	if i+8 <= n {
		x = le64(line[i:])
	} else {
		for b := n - 1; b >= i; b-- {
			x = x<<8 | uint64(line[b])
		}
	}
	x |= 0x2020202020202020
	for ; cand != 0; cand &= cand - 1 {
		w := bits.TrailingZeros32(cand)
		word := informative[w]
		if i+len(word) > n || x&wordMask[w] != wordHead[w] {
			continue
		}
		k := 8
		for k < len(word) && line[i+k]|0x20 == word[k] {
			k++
		}
		if k >= len(word) {
			found |= 1 << w
		}
	}
	return found
}

// The classes of ASCII bytes for scoreASCII.
const (
	classSep   = 1 << iota // splits fields (fieldSep)
	classPath              // '/' or '.'
	classIdent             // '_'
	classDigit
	classUpper
	classSecond // the second byte of an informative word, in some case
)

var asciiClass = func() (t [256]uint8) {
	for c := 0; c < utf8RuneSelf; c++ {
		switch {
		case fieldSep[c]:
			t[c] = classSep
		case c == '/' || c == '.':
			t[c] = classPath
		case c == '_':
			t[c] = classIdent
		case '0' <= c && c <= '9':
			t[c] = classDigit
		case 'A' <= c && c <= 'Z':
			t[c] = classUpper
		}
	}
	for _, w := range informative {
		t[w[1]] |= classSecond
		t[w[1]-('a'-'A')] |= classSecond
	}
	return t
}()

// The informative words for scoreASCII: wordStarts has a bit for the first
// two bytes of each (a little-endian uint16), wordsByFirst a bit for each
// starting with a byte, and wordHead and wordMask are each one's first eight
// bytes (fewer if shorter) as a little-endian uint64 and the mask of those.
var wordStarts, wordsByFirst, wordHead, wordMask = func() (starts [1 << 10]uint64, by [256]uint32, head, mask [32]uint64) {
	for i, w := range informative {
		k := uint16(w[0]) | uint16(w[1])<<8
		starts[k>>6] |= 1 << (k & 63)
		by[w[0]] |= 1 << i
		for k := 0; k < min(len(w), 8); k++ {
			head[i] |= uint64(w[k]) << (8 * k)
			mask[i] |= 0xff << (8 * k)
		}
	}
	return
}()

// lowersToASCII are the characters whose lower case is ASCII (the Kelvin
// sign and the dotted capital I); lines with them are scored by scoreSlow
// (lineScore looks for each one by one).
const lowersToASCII = "\u212a\u0130"

const utf8RuneSelf = 0x80

// fieldSep marks the ASCII bytes lineScore splits fields at: white space
// (unicode.IsSpace) and the punctuation of scoreSlow.
var fieldSep = func() (t [256]bool) {
	for _, c := range "\t\n\v\f\r ,;()[]{}\"'`" {
		t[c] = true
	}
	return t
}()

// runNeutral marks the ASCII bytes that neither split fields nor give a
// field a class, and start no informative word.
var runNeutral = func() (t [256]bool) {
	for c := 0; c < utf8RuneSelf; c++ {
		switch {
		case fieldSep[c], c <= ' ', c == 0x7f, c == '/', c == '.', c == '_',
			'0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		default:
			t[c] = true
		}
	}
	return t
}()

// informativeByFirst lists, for each byte, the informative words (indices
// into informativeBytes) that start with it.
var informativeByFirst = func() (t [256][]uint8) {
	for i, w := range informative {
		t[w[0]] = append(t[w[0]], uint8(i))
	}
	return t
}()

var informativeBytes = func() [][]byte {
	b := make([][]byte, len(informative))
	for i, w := range informative {
		b[i] = []byte(w)
	}
	return b
}()

// scoreSlow is the definition of lineScore, for any line.
func scoreSlow(line string) int {
	s := 0
	low := strings.ToLower(line)
	for _, w := range informative {
		if strings.Contains(low, w) {
			s += 3
		}
	}
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",;()[]{}\"'`", r) }) {
		switch {
		case strings.ContainsAny(f, "/.") && len(f) > 3 && !strings.HasSuffix(f, "."):
			s += 2 // paths, dotted names, URLs
		case strings.Contains(f, "_") || hasInnerUpper(f):
			s += 2 // identifiers
		case strings.IndexFunc(f, unicode.IsDigit) >= 0:
			s++
		}
	}
	if s > 12 {
		s = 12
	}
	return s
}

func hasInnerUpper(f string) bool {
	for i, r := range f {
		if i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// truncateUTF8 cuts s to at most n bytes at a character boundary.
func truncateUTF8(s string, n int) string {
	if HasFiller(s) {
		return cutRunBytes(s, n)
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
