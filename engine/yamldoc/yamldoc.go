// Package yamldoc cuts a multi-document YAML stream exactly the way istioctl kube-inject does
// (k8s.io/apimachinery's YAMLReader over a LineReader), and knows the line each document starts
// on, which YAMLReader does not tell. It also holds what the engine and package secrets both
// need of a parsed document: a mapping's entry, an alias followed, a field's path as the diff
// writes it, and a value clipped as a message echoes it. It is its own small package so its fuzz
// tests run fast.
package yamldoc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Doc is one document and the 1-based line of the input it starts on.
type Doc struct {
	Raw  []byte
	Line int
}

// SeparatorError is a "---" line followed by something other than spaces or a comment.
type SeparatorError struct {
	// Doc is the 1-based document the separator would have opened; Line its line.
	Doc, Line int
	Text      string
}

func (e *SeparatorError) Error() string {
	return fmt.Sprintf("invalid Yaml document separator: %s", e.Text)
}

// Split cuts in into documents: lines are read with bufio.ReadLine, so "\r\n" becomes "\n" and
// every line ends in "\n"; a line starting with "---" ends a non-empty document and may be
// followed only by spaces or a comment; a separator that would open an empty document is kept as
// that document's first line (so "---\na: 1" is one document, separator included, exactly as
// istioctl writes it back). On a bad separator it returns the documents before it.
func Split(in []byte) ([]Doc, error) {
	r := bufio.NewReaderSize(bytes.NewReader(in), 4096)
	var (
		out     []Doc
		buf     bytes.Buffer
		scratch []byte // the line read, used again for each line
		start   int
		line    int
	)
	for {
		l, err := readLine(r, scratch[:0])
		scratch = l
		if err != nil && err != io.EOF {
			return nil, err
		}
		line++
		if bytes.HasPrefix(l, []byte("---")) {
			// At the end of the input too: a last line that fills bufio's buffer exactly comes
			// with io.EOF, and YAMLReader checks it as a separator before it drops it.
			trimmed := strings.TrimSpace(string(l[3:]))
			if len(trimmed) > 0 && trimmed[0] != '#' {
				// It would end the open document, if one is, and open the next.
				doc := len(out) + 1
				if buf.Len() != 0 {
					doc++
				}
				return out, &SeparatorError{Doc: doc, Line: line, Text: trimmed}
			}
			if buf.Len() != 0 && err == nil {
				out = append(out, Doc{Raw: bytes.Clone(buf.Bytes()), Line: start})
				buf.Reset()
				continue
			}
			// A separator that opens a document stays in it, as in YAMLReader.
		}
		if err == io.EOF {
			if buf.Len() != 0 {
				out = append(out, Doc{Raw: bytes.Clone(buf.Bytes()), Line: start})
			}
			return out, nil
		}
		if buf.Len() == 0 {
			start = line
		}
		buf.Write(l)
	}
}

// readLine mirrors yaml.LineReader.Read: one whole line with a "\n" appended, appended to dst (a
// line is not a new buffer: a 3 MB manifest has ~70,000 of them), and the reader's error. At the
// end of the input the line is "\n" with io.EOF, or, when the last line fills bufio's buffer
// exactly and has no "\n", that line with io.EOF: the only case in which YAMLReader drops the
// line it was given.
func readLine(r *bufio.Reader, dst []byte) ([]byte, error) {
	isPrefix := true
	var err error
	var l []byte
	for isPrefix && err == nil {
		l, isPrefix, err = r.ReadLine()
		dst = append(dst, l...)
	}
	return append(dst, '\n'), err
}
