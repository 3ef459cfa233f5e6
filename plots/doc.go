// Package plots draws ctxsim's figures from plain series with gonum/plot.
//
// It knows nothing of the simulator: callers (the bench harness, the command line) pass
// slices of numbers and names, and get a [Figure] that writes itself as SVG (for the
// committed report and golden tests) and PNG (for viewers that cannot show SVG).
//
// Four figures cover the report of DESIGN.md §8:
//
//   - [WindowPanels]: side-by-side metric panels against the model window (log axis with
//     a tick at every window swept: 8K, 16K, …, 1M, 2M), one line per policy;
//   - [RequestSeries]: request tokens (solid) and prefix-stable tokens (dashed) per request
//     of one run per policy, with the window as a reference line;
//   - [Occupancy]: region occupancy over a run, stacked in the blueprint's region order;
//   - [RecallDepth]: fact recall against the depth of the fact, per policy.
//
// Readability rules hold for every figure: a title, axis labels with units, one legend
// outside the data area in the order the caller gave, and series styles that stay
// distinguishable in grey (each style differs in luminance, dash pattern and glyph). A
// series' style is chosen by a stable key (the policy name by default), so "flat" looks
// the same in every figure of a report.
//
// Bad data (mismatched lengths, infinities, non-positive values on a log axis, negative
// occupancy) does not panic: the constructor records the error and every Write or Save
// returns it, naming the series and the point. NaN marks a gap in a line; a plot without
// any data says "no data". Runs of thousands of requests are thinned for drawing (the
// least and greatest value of each small bucket are kept), so cliffs and spikes survive
// and files stay small.
//
// Output is deterministic: the same data gives byte-identical SVG (text in Liberation Sans,
// which ships with gonum/plot; SVG names Arial, its metric twin, as the fallback). Save
// writes each file through a temporary file and a rename, so a reader never sees half a
// figure.
package plots
