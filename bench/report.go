package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// verdict is how a figure compares with its target.
type verdict int

const (
	noTarget verdict = iota // a figure reported for context
	pass
	miss
)

func (v verdict) String() string {
	return [...]string{"", "PASS", "MISS"}[v]
}

// judge is pass when ok, miss otherwise.
func judge(ok bool) verdict {
	if ok {
		return pass
	}
	return miss
}

// figure is one line of the report.
type figure struct {
	Name   string
	Value  string
	Target string
	Result verdict
}

// report is every figure of a run, how it was run and on what.
type report struct {
	Command string // as typed, e.g. go run ./bench -quick
	Setup   string
	Figures []figure
}

func (r *report) add(fs ...figure) { r.Figures = append(r.Figures, fs...) }

// missed reports whether any figure missed its target.
func (r *report) missed() bool {
	for _, f := range r.Figures {
		if f.Result == miss {
			return true
		}
	}
	return false
}

// writePlain writes the report as aligned columns.
func (r *report) writePlain(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s on %s\n\n", r.Command, r.Setup); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tMEASURED\tTARGET\tRESULT")
	for _, f := range r.Figures {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, f.Value, f.Target, f.Result)
	}
	return tw.Flush()
}

// writeMarkdown writes the report as a markdown table, for docs/performance.md.
func (r *report) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured with `%s` on %s.\n\n", r.Command, r.Setup)
	b.WriteString("| Figure | Measured | Target | Result |\n|---|---|---|---|\n")
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(f.Name), cell(f.Value), cell(f.Target), f.Result)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell is s made safe inside a markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// ms is d in milliseconds, to one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
