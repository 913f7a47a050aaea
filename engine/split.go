package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// chunk is one YAML document as istioctl's reader sees it, with where it starts.
type chunk struct {
	raw  []byte
	line int // 1-based line of the chunk's first line in the whole input
}

// splitDocuments cuts a multi-document YAML stream exactly the way istioctl kube-inject does
// (k8s.io/apimachinery's YAMLReader over a LineReader): lines are read with bufio.ReadLine, so
// "\r\n" becomes "\n" and every line ends in "\n"; a line starting with "---" ends a non-empty
// document and may be followed only by spaces or a comment; a separator that would open an empty
// document is kept as that document's first line (so "---\na: 1" is one document, separator
// included, exactly as istioctl writes it back). We reimplement
// the loop (rather than call YAMLReader) only to know the line each document starts on; a fuzz
// test holds the two to the same output.
func splitDocuments(in []byte) ([]chunk, error) {
	r := bufio.NewReaderSize(bytes.NewReader(in), 4096)
	var (
		out   []chunk
		buf   bytes.Buffer
		start int
		line  int
	)
	for {
		l, err := readLine(r)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if err == io.EOF {
			if buf.Len() != 0 {
				out = append(out, chunk{raw: bytes.Clone(buf.Bytes()), line: start})
			}
			return out, nil
		}
		line++
		if bytes.HasPrefix(l, []byte("---")) {
			trimmed := strings.TrimSpace(string(l[3:]))
			if len(trimmed) > 0 && trimmed[0] != '#' {
				return out, &InputError{Doc: len(out) + 1, Line: line, Field: "manifest",
					Msg: fmt.Sprintf("invalid Yaml document separator: %s", trimmed)}
			}
			if buf.Len() != 0 {
				out = append(out, chunk{raw: bytes.Clone(buf.Bytes()), line: start})
				buf.Reset()
				continue
			}
			// A separator that opens a document stays in it, as in YAMLReader.
		}
		if buf.Len() == 0 {
			start = line
		}
		buf.Write(l)
	}
}

// readLine mirrors yaml.LineReader.Read: one whole line with a "\n" appended. At the end of the
// input it returns io.EOF with no line, which is the only case in which YAMLReader drops the
// line it was given.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf bytes.Buffer
	isPrefix := true
	var err error
	var l []byte
	for isPrefix && err == nil {
		l, isPrefix, err = r.ReadLine()
		buf.Write(l)
	}
	if err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}
