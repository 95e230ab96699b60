package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

func init() {
	register("junit", func(o Options) Printer { return junitPrinter{base: o.BaseDir} })
}

// junitPrinter writes a JUnit XML report for CI test dashboards: one
// testsuite per store, one testcase per session, one <failure> per finding
// that fails the run (see Report.FailPolicy). Findings below --fail-on and
// suppressed findings do not fail their testcase; they are listed in its
// <system-out>. A store that could not be listed gets an <error>.
type junitPrinter struct{ base string }

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	File      string         `xml:"file,attr,omitempty"`
	Failures  []junitProblem `xml:"failure"`
	Errors    []junitProblem `xml:"error"`
	SystemOut *junitText     `xml:"system-out"`
}

type junitText struct {
	Text string `xml:",cdata"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

func (p junitPrinter) Print(w io.Writer, r *Report) error {
	type key struct {
		shape store.Shape
		path  string
	}
	bySession := map[key]map[string][]scan.Finding{}
	var extra []scan.StoreResult
	known := map[key]bool{}
	for _, sr := range r.stores() {
		known[key{sr.Info.Shape, sr.Info.Path}] = true
	}
	for _, f := range r.all() {
		k := key{f.Shape, f.StorePath}
		if bySession[k] == nil {
			bySession[k] = map[string][]scan.Finding{}
			if !known[k] {
				known[k] = true
				extra = append(extra, scan.StoreResult{Info: store.Info{Shape: f.Shape, Path: f.StorePath}})
			}
		}
		bySession[k][f.SessionID] = append(bySession[k][f.SessionID], f)
	}

	doc := junitSuites{Name: "sessfix"}
	for _, sr := range append(append([]scan.StoreResult{}, r.stores()...), extra...) {
		k := key{sr.Info.Shape, sr.Info.Path}
		storePath := relPath(p.base, sr.Info.Path)
		suite := junitSuite{Name: StoreName(store.Info{Shape: sr.Info.Shape, Path: storePath})}
		if sr.Err != nil {
			c := junitCase{Name: "list sessions", Classname: storePath,
				Errors: []junitProblem{{Message: "cannot list the sessions of the store", Type: "store", Text: sr.Err.Error()}}}
			if sr.Info.Shape == "" {
				c.Name, c.Errors[0].Message, c.Errors[0].Type = "open", "cannot open it as an opencode store", "input"
			}
			suite.Cases = append(suite.Cases, c)
		}
		// The store's own findings (the store-health rules) first, in a
		// testcase named for the store; then the sessions in the store's
		// order, then any session that has findings but no summary.
		ids := []string{}
		seen := map[string]bool{}
		if len(bySession[k][""]) > 0 {
			ids, seen[""] = append(ids, ""), true
		}
		for _, s := range sr.Sessions {
			ids, seen[s.ID] = append(ids, s.ID), true
		}
		for _, f := range r.all() {
			if f.Shape == sr.Info.Shape && f.StorePath == sr.Info.Path && !seen[f.SessionID] {
				ids, seen[f.SessionID] = append(ids, f.SessionID), true
			}
		}
		titles := map[string]string{}
		for _, s := range sr.Sessions {
			titles[s.ID] = s.Title
		}
		for _, id := range ids {
			c := p.testcase(r, storePath, id, titles[id], bySession[k][id])
			if id == "" {
				c.Name = ownName(sr.Info.Shape)
			}
			suite.Cases = append(suite.Cases, c)
		}
		for _, c := range suite.Cases {
			suite.Tests++
			suite.Failures += len(c.Failures)
			suite.Errors += len(c.Errors)
		}
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Errors += suite.Errors
		doc.Suites = append(doc.Suites, suite)
	}

	doc.clean()
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// ownName names what a store's own findings are about: "database" or
// "store".
func ownName(shape store.Shape) string {
	if shape == store.ShapeSQLite || shape == store.ShapeSQLite2 {
		return "database"
	}
	return "store"
}

// testcase is one session: a failure per failing finding, the rest listed
// in system-out.
func (p junitPrinter) testcase(r *Report, storePath, id, title string, fs []scan.Finding) junitCase {
	name := id
	if title != "" {
		name += " " + title
	}
	c := junitCase{Name: name, Classname: storePath}
	var out []string
	for _, f := range fs {
		where := relPath(p.base, f.Location.Path)
		if f.Location.Path == "" {
			where = storePath
		}
		loc := store.Location{Path: where, Line: f.Location.Line, Table: f.Location.Table, RowID: f.Location.RowID}
		line := fmt.Sprintf("%s: %s %s %s", loc.String(), f.Severity, f.Code, findingDetail(f, false, r.repairs(f)))
		switch {
		case f.Suppressed():
			out = append(out, "suppressed: "+line+"\n  reason: "+f.Suppression.Reason)
		case r.fails(f):
			if c.File == "" && f.Location.Table == "" {
				c.File = where
			}
			c.Failures = append(c.Failures, junitProblem{
				Message: f.Code + " " + f.Message,
				Type:    f.Severity.String(),
				Text:    line,
			})
		default:
			out = append(out, "below --fail-on: "+line)
		}
	}
	if len(out) > 0 {
		c.SystemOut = &junitText{Text: strings.Join(out, "\n")}
	}
	return c
}

// clean makes every text of the report one XML 1.0 can carry: a control
// character from the store (other than a line break) is invalid in XML
// even as a character reference, so it is written as Clean escapes it.
func (d *junitSuites) clean() {
	for i := range d.Suites {
		s := &d.Suites[i]
		s.Name = Clean(s.Name)
		for j := range s.Cases {
			c := &s.Cases[j]
			c.Name, c.Classname, c.File = Clean(c.Name), Clean(c.Classname), Clean(c.File)
			for _, ps := range [][]junitProblem{c.Failures, c.Errors} {
				for k := range ps {
					ps[k].Message, ps[k].Text = CleanLines(ps[k].Message), CleanLines(ps[k].Text)
				}
			}
			if c.SystemOut != nil {
				c.SystemOut.Text = CleanLines(c.SystemOut.Text)
			}
		}
	}
}
