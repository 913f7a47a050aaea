package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

// formulaStart are the characters that make a spreadsheet read a cell as a formula when they
// come first, after any spaces: = + - @ and their full-width forms (＝ ＋ － ＠, which Excel
// reads as the ASCII ones in an East Asian locale), tab, CR and LF.
const formulaStart = "=+-@\t\r\n＝＋－＠"

// formulaLike says a spreadsheet may run c as a formula.
func formulaLike(c string) bool {
	c = strings.TrimLeft(c, " \u3000")
	r, _ := utf8.DecodeRuneInString(c)
	return c != "" && strings.ContainsRune(formulaStart, r)
}

// needsQuote says c is written with a leading single quote: it starts like a formula, or it is
// itself a quote before such a cell (so that unescapeCell gives back exactly what was written).
func needsQuote(c string) bool {
	return formulaLike(c) || (strings.HasPrefix(c, "'") && needsQuote(c[1:]))
}

// spreadsheetSafe escapes a CSV cell a spreadsheet would run as a formula, as OWASP recommends
// for CSV injection: a leading single quote, which spreadsheets show as text. ("-i * -b *",
// istio-init's arguments, becomes "'-i * -b *".)
func spreadsheetSafe(cells []string) []string {
	for i, c := range cells {
		if needsQuote(c) {
			cells[i] = "'" + c
		}
	}
	return cells
}

// unescapeCell undoes spreadsheetSafe.
func unescapeCell(c string) string {
	if strings.HasPrefix(c, "'") && needsQuote(c[1:]) {
		return c[1:]
	}
	return c
}

// markdownCell escapes a Markdown table's cell: what Markdown would read as markup (a pipe ends
// the cell; backslashes, backticks, emphasis, links and HTML) is backslash-escaped, and a line
// break becomes a space. Markdown is not a spreadsheet: no quote is added.
var markdownCell = strings.NewReplacer("\\", `\\`, "|", `\|`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "~", `\~`, "\r\n", " ", "\n", " ", "\r", " ")

// BatchFormat is how batch rows are written: the downloads' formats.
type BatchFormat string

// The formats a BatchWriter writes.
const (
	BatchFormatCSV      BatchFormat = "csv"
	BatchFormatMarkdown BatchFormat = "markdown"
	BatchFormatJSON     BatchFormat = "json"
)

// BatchWriter writes rows one at a time, each as soon as it is given, so a batch of any size is
// written without holding its rows: the bytes are those BatchCSV, BatchMarkdown and BatchJSON
// write for the same rows at once (they are this writer over a buffer).
type BatchWriter struct {
	w      io.Writer
	format BatchFormat
	csv    *csv.Writer
	// cols are the header and cells CSV and Markdown write: indexes in engine.BatchColumns, in
	// order.
	cols []int
	// rows counts the rows written; started says the header (or the JSON array's "[") is out.
	rows    int
	started bool
}

// NewBatchWriter writes rows to w in format. CSV and Markdown write the columns named (names
// of engine.BatchColumns, in the order given), or every column when none is. JSON writes every
// field of every row: it is the rows as data, the shape the API gives, whatever a table shows, so
// naming columns for it is an error rather than a choice silently ignored.
func NewBatchWriter(w io.Writer, format BatchFormat, cols ...string) (*BatchWriter, error) {
	bw := &BatchWriter{w: w, format: format}
	switch format {
	case BatchFormatCSV:
		bw.csv = csv.NewWriter(w)
	case BatchFormatMarkdown:
	case BatchFormatJSON:
		if len(cols) > 0 {
			return nil, &input.Fault{ID: "batch-json-columns"}
		}
	default:
		return nil, &input.Fault{ID: "batch-format", Params: input.Params("formatQ", strconv.Quote(string(format)))}
	}
	all := engine.BatchColumnNames()
	if len(cols) == 0 {
		cols = all
	}
	for _, c := range cols {
		i := slices.Index(all, c)
		if i < 0 || slices.Contains(bw.cols, i) {
			return nil, &input.Fault{ID: "batch-column", Params: input.Params("columnQ", strconv.Quote(c), "columns", strings.Join(all, ", "))}
		}
		bw.cols = append(bw.cols, i)
	}
	return bw, nil
}

// pick is the writer's columns of all, in the writer's order.
func (bw *BatchWriter) pick(all []string) []string {
	out := make([]string, len(bw.cols))
	for i, c := range bw.cols {
		out[i] = all[c]
	}
	return out
}

// start writes what comes before the first row: CSV's and Markdown's header.
func (bw *BatchWriter) start() error {
	if bw.started {
		return nil
	}
	bw.started = true
	cols := bw.pick(engine.BatchColumnNames())
	switch bw.format {
	case BatchFormatCSV:
		_ = bw.csv.Write(cols)
	case BatchFormatMarkdown:
		_, err := io.WriteString(bw.w, "| "+strings.Join(cols, " | ")+" |\n|"+strings.Repeat("---|", len(cols))+"\n")
		return err
	}
	return nil
}

// Write writes one row, each cell escaped for its format: CSV's that start like a formula
// (spreadsheetSafe), Markdown's markup (markdownCell).
func (bw *BatchWriter) Write(r engine.BatchRow) error {
	if err := bw.start(); err != nil {
		return err
	}
	bw.rows++
	switch bw.format {
	case BatchFormatCSV:
		_ = bw.csv.Write(spreadsheetSafe(bw.pick(r.Cells())))
		bw.csv.Flush()
		return bw.csv.Error()
	case BatchFormatMarkdown:
		cs := bw.pick(r.Cells())
		for i := range cs {
			cs[i] = markdownCell.Replace(cs[i])
		}
		_, err := io.WriteString(bw.w, "| "+strings.Join(cs, " | ")+" |\n")
		return err
	}
	// An element of an indented JSON array, as json.MarshalIndent(rows, "", "  ") writes it.
	b, err := json.MarshalIndent(r, "  ", "  ")
	if err != nil {
		return err
	}
	sep := ",\n  "
	if bw.rows == 1 {
		sep = "[\n  "
	}
	_, err = io.WriteString(bw.w, sep+string(b))
	return err
}

// Close writes what comes after the last row (the header alone when there were no rows; a JSON
// array's end). It does not close the underlying writer.
func (bw *BatchWriter) Close() error {
	if err := bw.start(); err != nil {
		return err
	}
	switch bw.format {
	case BatchFormatCSV:
		bw.csv.Flush()
		return bw.csv.Error()
	case BatchFormatJSON:
		end := "\n]\n"
		if bw.rows == 0 {
			end = "[]\n"
		}
		_, err := io.WriteString(bw.w, end)
		return err
	}
	return nil
}

// BatchFile writes all the rows in format, CSV and Markdown in the columns named (every column
// when none is; see NewBatchWriter): the playground's downloads.
func BatchFile(rows []engine.BatchRow, format BatchFormat, cols ...string) ([]byte, error) {
	var buf bytes.Buffer
	bw, err := NewBatchWriter(&buf, format, cols...)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if err := bw.Write(r); err != nil {
			return nil, err
		}
	}
	if err := bw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// batchBytes writes all the rows in format, every column.
func batchBytes(rows []engine.BatchRow, format BatchFormat) []byte {
	b, _ := BatchFile(rows, format)
	return b
}

// BatchCSV writes the rows as CSV with a header; cells that start like a formula are escaped
// (spreadsheetSafe).
func BatchCSV(rows []engine.BatchRow) []byte { return batchBytes(rows, BatchFormatCSV) }

// BatchMarkdown writes the rows as a Markdown table, its cells' markup escaped (markdownCell).
func BatchMarkdown(rows []engine.BatchRow) []byte { return batchBytes(rows, BatchFormatMarkdown) }

// BatchJSON writes the rows as an indented JSON array ("[]" when there are none).
func BatchJSON(rows []engine.BatchRow) []byte { return batchBytes(rows, BatchFormatJSON) }

// readCell sets a row's field from its cell under the column named, as BatchRow.Cells wrote it
// (BatchColumn.Read); nil for a name that is no column's.
func readCell(name string) func(r *engine.BatchRow, v string) {
	for _, c := range engine.BatchColumns() {
		if c.Name == name {
			return c.Read
		}
	}
	return nil
}

// ParseBatchCSV reads rows written by BatchCSV or BatchFile back: the columns its header names
// (every one of engine.BatchColumns, once at most, in any order); fields of columns it does not
// have stay empty, capacity totals are read as text.
func ParseBatchCSV(data []byte) ([]engine.BatchRow, error) {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, &input.Fault{ID: "batch-csv-header"}
	}
	head := recs[0]
	read := make([]func(r *engine.BatchRow, v string), len(head))
	for i, c := range head {
		if read[i] = readCell(c); read[i] == nil || slices.Contains(head[:i], c) {
			return nil, &input.Fault{ID: "batch-csv-column", Params: input.Params("columnQ", strconv.Quote(c))}
		}
	}
	var out []engine.BatchRow
	for _, rec := range recs[1:] {
		var r engine.BatchRow
		for i, c := range rec {
			read[i](&r, unescapeCell(c))
		}
		out = append(out, r)
	}
	return out, nil
}
