package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// progressTo is where a long command draws its progress: w itself when it is a terminal, nil
// (no progress) when it is a pipe, a file or a buffer — a script reading stderr gets no bar.
func progressTo(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return w
	}
	return nil
}

// progressBar draws "[=======>      ]  812/2000" on one line, redrawn in place. A nil one (from
// a nil writer) draws nothing.
type progressBar struct {
	w        io.Writer
	n, total int
	// drawn is what is on the line now ("" when nothing is).
	drawn string
}

// barWidth is the bar's width in characters, between the brackets.
const barWidth = 30

func newProgressBar(w io.Writer, total int) *progressBar {
	if w == nil {
		return nil
	}
	p := &progressBar{w: w, total: total}
	p.draw()
	return p
}

// step counts one more done, and draws the bar when it changed or was erased.
func (p *progressBar) step() {
	if p == nil {
		return
	}
	p.n++
	p.draw()
}

func (p *progressBar) draw() {
	filled := barWidth
	if p.total > 0 {
		filled = p.n * barWidth / p.total
	}
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	line := fmt.Sprintf("[%s] %*d/%d", bar, len(fmt.Sprint(p.total)), p.n, p.total)
	if line != p.drawn {
		fmt.Fprint(p.w, "\r"+line)
		p.drawn = line
	}
}

// clear erases the bar, leaving the cursor at the start of the line.
func (p *progressBar) clear() {
	if p == nil || p.drawn == "" {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K")
	p.drawn = ""
}
