package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PNGDPI is the resolution of WritePNG: sharp on high-density screens, small enough to
// commit.
const PNGDPI = 144

// A Figure is a titled grid of plots with one shared legend. Build one with WindowPanels,
// RequestSeries, Occupancy or RecallDepth; a Figure is immutable afterwards and may be
// written any number of times, from any goroutine.
type Figure struct {
	title         string
	width, height vg.Length
	grid          [][]*plot.Plot // row-major; nil marks an empty tile
	legend        []legendEntry
	// legendRow, legendCol name the empty tile that holds the legend; -1 puts it in a strip
	// below the grid.
	legendRow, legendCol int
	// legendGroup > 1 rounds the legend's column count down to a multiple of it, so that
	// entries that belong together (a run's request and prefix lines) share a row.
	legendGroup int
	err         error
	mu          sync.Mutex // gonum's Plot.Draw may adjust axes: writes take turns
}

// legendEntry is one line of the legend: thumbnails drawn on top of each other, then text.
type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

// Err reports the first problem found in the figure's data, or nil. The same error is
// returned by every write.
func (f *Figure) Err() error { return f.err }

// Title is the figure's title as given.
func (f *Figure) Title() string { return f.title }

// Size is the figure's size in points (1/72 inch).
func (f *Figure) Size() (width, height float64) {
	return f.width.Points(), f.height.Points()
}

// WriteSVG writes the figure as SVG. The output is deterministic: same data, same bytes.
func (f *Figure) WriteSVG(w io.Writer) error {
	if f.err != nil {
		return f.err
	}
	c := vgsvg.New(f.width, f.height)
	if err := f.render(draw.New(c)); err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("plots: writing svg of %q: %w", f.title, err)
	}
	if _, err := w.Write(bytes.ReplaceAll(buf.Bytes(), svgFontFamily, svgFontFallback)); err != nil {
		return fmt.Errorf("plots: writing svg of %q: %w", f.title, err)
	}
	return nil
}

// Fonts are not embedded in the SVG (that would add ~400 KB per figure); Liberation Sans
// has the metrics of Arial, so naming Arial and Helvetica as fallbacks keeps the layout
// on machines without Liberation.
var (
	svgFontFamily   = []byte("font-family:Liberation Sans;")
	svgFontFallback = []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
)

// WritePNG writes the figure as a PNG image at PNGDPI.
func (f *Figure) WritePNG(w io.Writer) error {
	if f.err != nil {
		return f.err
	}
	c := vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(PNGDPI))
	if err := f.render(draw.New(c)); err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
		return fmt.Errorf("plots: writing png of %q: %w", f.title, err)
	}
	return nil
}

// Save writes pathWithoutExt+".svg" and pathWithoutExt+".png". Each file is written to a
// temporary file in the same directory and renamed into place, so an interrupted run never
// leaves a truncated figure behind.
func (f *Figure) Save(pathWithoutExt string) error {
	if f.err != nil {
		return f.err
	}
	if err := writeAtomic(pathWithoutExt+".svg", f.WriteSVG); err != nil {
		return err
	}
	return writeAtomic(pathWithoutExt+".png", f.WritePNG)
}

func writeAtomic(path string, write func(io.Writer) error) (err error) {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("plots: saving %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("plots: saving %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; a figure is meant to be read by anyone who can read
	// the report.
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("plots: saving %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("plots: saving %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("plots: saving %s: %w", path, err)
	}
	return nil
}

// Layout constants, in points.
var (
	figurePad      = vg.Points(8)
	tilePadX       = vg.Points(18)
	tilePadY       = vg.Points(14)
	legendThumbW   = vg.Points(28)
	legendGap      = vg.Points(5)  // between thumbnail and text
	legendColGap   = vg.Points(16) // between columns
	legendRowScale = 1.6           // row height ÷ font size
)

func textStyle(f font.Font, size float64) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(f, font.Length(size)),
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: plot.DefaultTextHandler,
	}
}

// render draws the figure on c; mu keeps two writes of one figure from drawing its plots
// at the same time. gonum/plot reports some impossible states by panicking;
// the constructors validate data so that none should happen, and a recovered panic becomes
// an error rather than taking a whole sweep down.
func (f *Figure) render(c draw.Canvas) (err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plots: drawing %q: %v", f.title, r)
		}
	}()
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, figurePad, -figurePad, figurePad, -figurePad)

	if f.title != "" {
		// Lines are set one by one a full line height apart: gonum's own multi-line text
		// spaces them by the font size, which lets descenders touch the next line.
		lines, ts := titleLayout(f.title, c.Max.X-c.Min.X)
		for _, l := range lines {
			c.FillText(ts, vg.Point{X: c.Center().X, Y: c.Max.Y}, l)
			c.Max.Y -= ts.FontExtents().Height
		}
		c.Max.Y -= figurePad
	}

	if f.legendRow < 0 && len(f.legend) > 0 {
		lay := layoutLegend(f.legend, c.Max.X-c.Min.X, f.legendGroup)
		strip := c
		strip.Max.Y = strip.Min.Y + lay.height
		drawLegend(strip, f.legend, lay, true)
		c.Min.Y += lay.height + figurePad
	}

	rows := len(f.grid)
	if rows == 0 {
		return nil
	}
	cols := len(f.grid[0])
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: tilePadX, PadY: tilePadY}
	canvases := plot.Align(f.grid, tiles, c)
	for i, row := range f.grid {
		for j, p := range row {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if f.legendRow >= 0 && len(f.legend) > 0 {
		tile := tiles.At(c, f.legendCol, f.legendRow)
		tile = draw.Crop(tile, tilePadX, 0, 0, -tilePadY)
		// One column reads best beside the panels; fall back to more when it is too tall.
		lay := layoutLegend(f.legend, 0, 1)
		if lay.height > tile.Max.Y-tile.Min.Y {
			lay = layoutLegend(f.legend, tile.Max.X-tile.Min.X, 1)
		}
		drawLegend(tile, f.legend, lay, false)
	}
	return nil
}

// titleLayout fits the figure title to the width: titles carry workload and trace names of
// any length. A title that does not fit at figureTitleSize is set smaller, down to
// wrapTitleSize; below that it wraps at spaces instead, and a word wider than the figure
// even at minTitleSize is cut with an ellipsis.
func titleLayout(title string, width vg.Length) ([]string, text.Style) {
	ts := textStyle(boldFont, figureTitleSize)
	ts.XAlign = draw.XCenter
	ts.YAlign = draw.YTop
	w := ts.Width(title)
	if w <= width {
		return []string{title}, ts
	}
	if size := math.Floor(10*figureTitleSize*float64(width/w)) / 10; size >= wrapTitleSize {
		ts.Font.Size = font.Length(size)
		return []string{title}, ts
	}
	ts.Font.Size = wrapTitleSize
	var lines []string
	line := ""
	for _, word := range strings.Fields(title) {
		switch {
		case line == "":
			line = word
		case ts.Width(line+" "+word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	lines = append(lines, line)
	for i, l := range lines {
		for ts.Width(l) > width && ts.Font.Size > minTitleSize {
			ts.Font.Size = max(minTitleSize, ts.Font.Size-0.5)
		}
		if ts.Width(l) > width {
			r := []rune(l)
			for len(r) > 1 && ts.Width(string(r)+"…") > width {
				r = r[:len(r)-1]
			}
			lines[i] = string(r) + "…"
		}
	}
	return lines, ts
}

const (
	wrapTitleSize = 11
	minTitleSize  = 8
)

type legendLayout struct {
	cols, rows int
	colW, rowH vg.Length
	width      vg.Length
	height     vg.Length
	thumbH     vg.Length
}

// layoutLegend fits the entries into as many columns as the width allows (a multiple of
// group when group > 1 and it fits), filled row by row so that reading order is the
// caller's order.
func layoutLegend(entries []legendEntry, width vg.Length, group int) legendLayout {
	ts := textStyle(sansFont, legendSize)
	var textW vg.Length
	for _, e := range entries {
		textW = max(textW, ts.Rectangle(e.label).Size().X)
	}
	lay := legendLayout{
		colW:   legendThumbW + legendGap + textW,
		rowH:   vg.Length(legendRowScale * legendSize),
		thumbH: vg.Length(0.8 * legendSize),
	}
	lay.cols = 1
	if n := int((width + legendColGap) / (lay.colW + legendColGap)); n > 1 {
		lay.cols = n
	}
	if group > 1 && lay.cols > group {
		lay.cols -= lay.cols % group
	}
	lay.cols = min(lay.cols, max(len(entries), 1))
	lay.rows = (len(entries) + lay.cols - 1) / lay.cols
	lay.width = vg.Length(lay.cols)*(lay.colW+legendColGap) - legendColGap
	lay.height = vg.Length(lay.rows) * lay.rowH
	return lay
}

func drawLegend(c draw.Canvas, entries []legendEntry, lay legendLayout, center bool) {
	ts := textStyle(sansFont, legendSize)
	ts.YAlign = draw.YCenter
	x0 := c.Min.X
	if center {
		x0 += max(0, (c.Max.X-c.Min.X-lay.width)/2)
	}
	for i, e := range entries {
		row, col := i/lay.cols, i%lay.cols
		x := x0 + vg.Length(col)*(lay.colW+legendColGap)
		yMid := c.Max.Y - (vg.Length(row)+0.5)*lay.rowH
		thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: yMid - lay.thumbH/2},
			Max: vg.Point{X: x + legendThumbW, Y: yMid + lay.thumbH/2},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(&thumb)
		}
		c.FillText(ts, vg.Point{X: x + legendThumbW + legendGap, Y: yMid}, e.label)
	}
}

// newPlot makes a plot with the package's fonts and the given labels.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle = textStyle(boldFont, panelTitleSize)
	p.Title.TextStyle.XAlign = draw.XCenter
	p.Title.TextStyle.YAlign = draw.YTop
	p.Title.Padding = vg.Points(4)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle = textStyle(sansFont, axisLabelSize)
		a.Label.TextStyle.XAlign = draw.XCenter
		a.Tick.Label = textStyle(sansFont, tickLabelSize)
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	// gonum's alignment of tick labels (centred below, right of the axis), which the text
	// styles above overwrote; the Y axis label is rotated by gonum itself.
	p.X.Tick.Label.XAlign = draw.XCenter
	p.X.Tick.Label.YAlign = draw.YTop
	p.Y.Tick.Label.XAlign = draw.XRight
	p.Y.Tick.Label.YAlign = draw.YCenter
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Padding = vg.Points(3)
		a.Tick.Length = vg.Points(4)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = gridColor
	grid.Horizontal.Color = gridColor
	grid.Vertical.Width = vg.Points(0.4)
	grid.Horizontal.Width = vg.Points(0.4)
	p.Add(grid, edgePad{})
	return p
}

// errf makes a data error; all of them start with "plots: " and name the figure.
func errf(figure, format string, args ...any) error {
	return fmt.Errorf("plots: %q: %s", figure, fmt.Sprintf(format, args...))
}

// gridColor is light enough to stay behind every series, printed or not.
var gridColor = color.Gray{Y: 225}
