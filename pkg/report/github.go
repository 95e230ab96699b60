package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

func init() {
	register("github", func(o Options) Printer { return githubPrinter{base: o.BaseDir} })
}

// githubPrinter writes one GitHub Actions workflow command per finding, so
// that a workflow step running `sessfix scan --format github` shows each
// finding on the pull request at its file and line:
//
//	::error file=fixtures/ses.json,line=94,title=SF104 empty-text-part::text part is whitespace-only
//
// Suppressed findings are left out.
type githubPrinter struct{ base string }

// GitHubCommand maps a severity to a workflow command.
func GitHubCommand(s scan.Severity) string {
	switch s {
	case scan.Error:
		return "error"
	case scan.Warning:
		return "warning"
	}
	return "notice"
}

func (p githubPrinter) Print(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	for _, sr := range r.stores() {
		if sr.Err != nil {
			// Not a finding: an error of the run, on the store's file.
			// No path: no store was found where sessfix looked.
			file := ""
			if sr.Info.Path != "" {
				file = "file=" + escapeGitHubProperty(Clean(relPath(p.base, sr.Info.Path))) + ","
			}
			bw.WriteString("::error " + file + "title=sessfix::" + escapeGitHubData(CleanLines(StoreErrorf(sr).Error())) + "\n")
		}
	}
	for _, f := range r.findings() {
		bw.WriteString(p.annotation(r, f))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// annotation renders one finding as a workflow command.
func (p githubPrinter) annotation(r *Report, f scan.Finding) string {
	path := f.Location.Path
	if path == "" {
		path = f.StorePath
	}
	props := []string{"file=" + escapeGitHubProperty(Clean(relPath(p.base, path)))}
	if f.Location.Line > 0 {
		props = append(props, "line="+strconv.Itoa(f.Location.Line))
	}
	props = append(props, "title="+escapeGitHubProperty(f.Code+" "+f.Rule))
	return "::" + GitHubCommand(f.Severity) + " " + strings.Join(props, ",") + "::" + escapeGitHubData(CleanLines(findingDetail(f, true, r.repairs(f))))
}

// findingDetail is a finding's message with what a reader of a CI report
// needs beside the file and line: the record's ids when the location does
// not name it (SQLite rows and their table and rowid, export files), the
// provider's error, and the repair.
func findingDetail(f scan.Finding, withRow, repairs bool) string {
	msg := f.Message
	if f.Location.Table != "" || f.Location.Path == "" || f.Shape == store.ShapeExport {
		ids := idPath(f.SessionID, f.MessageID, f.PartID)
		if withRow && f.Location.Table != "" {
			ids += ", " + f.Location.Table + " rowid " + strconv.FormatInt(f.Location.RowID, 10)
		}
		if ids != "" {
			msg += " (" + strings.TrimPrefix(ids, ", ") + ")"
		}
	}
	if f.ProviderError != "" {
		msg += "\nprovider error: " + f.ProviderError
	}
	if repairs {
		msg += "\nrun `sessfix fix` to repair it (" + f.Fix + ")"
	}
	return msg
}

// repairs reports whether `sessfix fix` repairs f: it has a repair, in a
// store fix writes (ReadOnly).
func (r *Report) repairs(f scan.Finding) bool {
	return fixable(f) && (r.ReadOnly == nil || !r.ReadOnly(f.Store))
}

// escapeGitHubData escapes a workflow command's message: %, CR and LF.
func escapeGitHubData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeGitHubProperty escapes a workflow command's property value: as
// data, plus the ':' and ',' that separate properties.
func escapeGitHubProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
