package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sidecarlab/sidecarlab/clustermesh"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/wording"
)

// manifestFile is one manifest file as given: its name as the user wrote it (or found under a
// directory), "stdin" for -, and its bytes.
type manifestFile struct {
	name string
	data []byte
}

// stdinName names standard input in messages.
const stdinName = "stdin"

// manifestExts are the files a directory contributes, as kubectl reads them (case matters).
var manifestExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// readInputs gathers the manifests the -f flags name, in the order given: a file is read as is
// (whatever its name), - is standard input (once), a directory gives its *.yaml, *.yml and *.json
// files — only its own without recursive, its whole tree with it — in lexical order, so the
// order is the same on every run. Every command that reads manifests reads them here.
func readInputs(c *cli, names []string, recursive bool) ([]manifestFile, error) {
	var out []manifestFile
	readStdin := false
	for _, name := range names {
		if name == "-" {
			if readStdin {
				return nil, usageError{c.T("cli.error.stdin_twice")}
			}
			readStdin = true
			b, err := io.ReadAll(c.stdin)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.T("cli.error.reading_stdin"), err)
			}
			out = append(out, manifestFile{name: stdinName, data: b})
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			b, err := os.ReadFile(name)
			if err != nil {
				return nil, err
			}
			out = append(out, manifestFile{name: name, data: b})
			continue
		}
		files, err := dirManifests(name, recursive)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			msg := c.T("cli.error.empty_dir", "Dir", name)
			if !recursive {
				msg += c.T("cli.error.empty_dir_hint")
			}
			return nil, errors.New(msg)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, manifestFile{name: f, data: b})
		}
	}
	return out, nil
}

// dirManifests lists dir's manifest files, its own or with recursive every one under it, in the
// order kubectl reads them: a walk of the tree with each directory's entries in lexical order.
func dirManifests(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if manifestExts[filepath.Ext(path)] {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

// joined is several inputs as the one manifest the engine injects, and the way back from a
// place in it to the input it came from.
type joined struct {
	manifest []byte
	parts    []part
}

// part is where one input sits in the joined manifest.
type part struct {
	name string
	// line is the joined manifest's line of the input's first line.
	line int
	// docsBefore counts the documents of the inputs before it.
	docsBefore int
}

// join makes one manifest of the inputs that cuts into exactly the documents each input cuts
// into alone, in order: each input ends with a newline, and a separator line goes between two
// inputs unless the first already ends with one. So inject of several files prints what inject
// of each prints, one after the other. Inputs of blank lines only are left out (alone, each
// would be a blank document); one input is passed as it is.
func join(inputs []manifestFile) joined {
	if len(inputs) == 1 {
		return joined{manifest: inputs[0].data, parts: []part{{name: inputs[0].name, line: 1}}}
	}
	var (
		j    joined
		b    bytes.Buffer
		line = 1
		docs = 0
		sep  = true // whether what came before ends with a separator line
	)
	for _, in := range inputs {
		if len(bytes.TrimSpace(in.data)) == 0 {
			continue
		}
		if !sep {
			b.WriteString("---\n")
			line++
		}
		data := bytes.TrimSuffix(in.data, []byte("\n"))
		j.parts = append(j.parts, part{name: in.name, line: line, docsBefore: docs})
		b.Write(data)
		b.WriteByte('\n')
		line += bytes.Count(data, []byte("\n")) + 1
		d, _ := yamldoc.Split(data)
		docs += len(d)
		sep = endsWithSeparator(data)
	}
	if len(j.parts) == 0 {
		j.parts = []part{{name: inputs[0].name, line: 1}}
	}
	j.manifest = b.Bytes()
	return j
}

// endsWithSeparator is whether data's last line is a document separator ("---", maybe followed
// by spaces or a comment), as yamldoc.Split reads one.
func endsWithSeparator(data []byte) bool {
	last := data[bytes.LastIndexByte(data, '\n')+1:]
	rest, ok := bytes.CutPrefix(last, []byte("---"))
	rest = bytes.TrimSpace(rest)
	return ok && (len(rest) == 0 || rest[0] == '#')
}

// fileError is an input.Error placed in the file it is about: its document and line count
// within that file.
type fileError struct {
	file string
	err  *input.Error
}

func (e *fileError) Error() string { return e.file + ": " + e.err.Error() }

func (e *fileError) Unwrap() error { return e.err }

// text is the error in l's language: the file, then the input error as package wording words it. In
// English it is Error's text.
func (e *fileError) text(l *i18n.Localizer) string {
	return e.file + ": " + wording.In(l).InputErrorText(e.err)
}

// localizedError is an error worded in the CLI's language; errors.Is and As still see the
// error it words.
type localizedError struct {
	err  error
	text string
}

func (e *localizedError) Error() string { return e.text }

func (e *localizedError) Unwrap() error { return e.err }

// errText is err as the CLI says it: a document's error placed in its file in the CLI's
// language, anything else as it is.
func (c *cli) errText(err error) string {
	// Only the error itself: a wrapped one would lose its wrapper's words.
	switch e := err.(type) {
	case *fileError:
		return e.text(c.loc())
	case *input.Error:
		return wording.In(c.loc()).InputErrorText(e)
	case *input.Fault:
		return wording.In(c.loc()).FaultText(e)
	}
	return err.Error()
}

// localize words the error run returns (main prints it) in the CLI's language; errSilent and
// usage errors (already worded) come back as they are.
func (c *cli) localize(err error) error {
	switch err.(type) {
	case *fileError, *input.Error, *input.Fault:
		return &localizedError{err: err, text: c.errText(err)}
	case *clustermesh.Error, *clustermesh.Refused:
		return &localizedError{err: err, text: c.words().ClusterError(err)}
	}
	return err
}

// locate places an error about the joined manifest in the input it is about. Errors that are not
// about a place in the manifest come back as they are.
func (j joined) locate(err error) error {
	var ie *input.Error
	if !errors.As(err, &ie) || (ie.Line == 0 && ie.Doc == 0) {
		return err
	}
	p := j.partOf(ie.Line, ie.Doc)
	local := *ie
	if local.Doc > 0 {
		local.Doc -= p.docsBefore
	}
	if local.Line > 0 {
		local.Line = max(1, local.Line-p.line+1)
	}
	return &fileError{file: p.name, err: &local}
}

// partOf is the input a line of the joined manifest (or, without a line, a document) is in.
func (j joined) partOf(line, doc int) part {
	for i := len(j.parts) - 1; i > 0; i-- {
		p := j.parts[i]
		if (line > 0 && line >= p.line) || (line == 0 && doc > p.docsBefore) {
			return p
		}
	}
	return j.parts[0]
}
