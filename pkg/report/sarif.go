package report

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/sessfix/sessfix/pkg/scan"
)

func init() {
	register("sarif", func(o Options) Printer { return sarifPrinter{base: o.BaseDir} })
}

// RulesDocURL is the published rules reference; a rule's help link is this
// URL plus the anchor of its heading (see RuleDocAnchor).
const RulesDocURL = "https://github.com/sessfix/sessfix/blob/main/docs/rules.md"

// InformationURL is sessfix's home page, named as the SARIF tool's
// informationUri.
const InformationURL = "https://github.com/sessfix/sessfix"

// srcRoot is the uriBaseId of relative artifact URIs: the directory the scan
// ran in, which in CI is the checked-out repository.
const srcRoot = "%SRCROOT%"

// fingerprintKey names sessfix's partial fingerprint, so that code scanning
// tracks a finding across runs even when an export file's line numbers
// shift. Bump the version if the fingerprint's inputs ever change.
const fingerprintKey = "sessfixFinding/v1"

// RuleDocAnchor returns the anchor docs/rules.md gives a rule's heading
// ("## SF103 thinking-not-first" → "sf103-thinking-not-first").
func RuleDocAnchor(code, name string) string {
	return strings.ToLower(code + "-" + name)
}

// RuleHelpURL returns the link to a rule's section of docs/rules.md.
func RuleHelpURL(code, name string) string {
	return RulesDocURL + "#" + RuleDocAnchor(code, name)
}

// SARIFLevel maps a severity to a SARIF result level.
func SARIFLevel(s scan.Severity) string {
	switch s {
	case scan.Error:
		return "error"
	case scan.Warning:
		return "warning"
	}
	return "note"
}

// sarifPrinter writes one SARIF 2.1.0 log with one run. docs/sarif.md
// describes the mapping.
type sarifPrinter struct{ base string }

func (p sarifPrinter) Print(w io.Writer, r *Report) error {
	log, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	driver := sarif.NewDriver("sessfix").WithInformationURI(InformationURL)
	if r.Version != "" {
		driver.WithVersion(r.Version)
	}
	driver.Rules = []*sarif.ReportingDescriptor{}
	run := sarif.NewRun(*sarif.NewTool(driver))
	run.Results = []*sarif.Result{}

	index := map[string]int{}
	for _, code := range sarifCodes(r.all()) {
		index[code] = len(driver.Rules)
		driver.Rules = append(driver.Rules, sarifRule(code, r.all()))
	}
	for _, f := range r.all() {
		run.AddResult(p.result(f, index[f.Code]))
	}
	// A store that could not be read is a failure of the run, not a
	// finding: an invocation that did not succeed, with one notification
	// per store.
	var failed []*sarif.Notification
	for _, sr := range r.stores() {
		if sr.Err != nil {
			n := sarif.NewNotification().WithLevel("error").WithTextMessage(StoreErrorf(sr).Error())
			if sr.Info.Path != "" { // "": no store found where sessfix looked
				n.AddLocation(sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().WithArtifactLocation(p.artifact(sr.Info.Path))))
			}
			failed = append(failed, n)
		}
	}
	if len(failed) > 0 {
		run.AddInvocation(false).WithToolExecutionNotifications(failed)
	}
	log.AddRun(run)
	return WriteJSON(w, log)
}

// sarifCodes lists the codes that have findings, sorted: the run's rules
// array describes exactly the rules its results refer to.
func sarifCodes(fs []scan.Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if !seen[f.Code] {
			seen[f.Code] = true
			out = append(out, f.Code)
		}
	}
	sort.Strings(out)
	return out
}

// sarifRule describes a rule from the registry; a code the registry does
// not know is described from its findings.
func sarifRule(code string, fs []scan.Finding) *sarif.ReportingDescriptor {
	rule := scan.Lookup(code)
	if rule == nil {
		name := ""
		for _, f := range fs {
			if f.Code == code {
				name = f.Rule
				break
			}
		}
		d := sarif.NewRule(code).WithName(name).WithHelpURI(RulesDocURL)
		d.WithShortDescription(sarif.NewMultiformatMessageString(name))
		return d
	}
	d := sarif.NewRule(rule.Code).
		WithName(rule.Name).
		WithHelpURI(RuleHelpURL(rule.Code, rule.Name)).
		WithShortDescription(sarif.NewMultiformatMessageString(rule.Summary)).
		WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(SARIFLevel(rule.Severity)))
	if rule.What != "" {
		d.WithFullDescription(sarif.NewMultiformatMessageString(rule.What))
	}
	d.WithHelp(sarif.NewMultiformatMessageString(ruleHelpText(rule)))
	props := sarif.NewPropertyBag()
	props.Add("tags", []string{"opencode", "sessions"})
	props.AddBoolean("fixable", rule.Fixable)
	props.AddString("fix", rule.Fix)
	d.AttachPropertyBag(props)
	return d
}

// ruleHelpText is the rule's documentation as plain text: what it finds,
// why it matters, what `sessfix fix` does.
func ruleHelpText(r *scan.Rule) string {
	var parts []string
	for _, s := range []string{r.What, r.Why} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	switch {
	case r.Fixable && r.Fix != "":
		parts = append(parts, "`sessfix fix` repairs it: "+r.Fix+".")
	default:
		parts = append(parts, "Report only: `sessfix fix` does not change it.")
	}
	parts = append(parts, "Run `sessfix explain "+r.Code+"` for more.")
	return strings.Join(parts, "\n\n")
}

func (p sarifPrinter) result(f scan.Finding, ruleIndex int) *sarif.Result {
	res := sarif.NewRuleResult(f.Code).
		WithRuleIndex(ruleIndex).
		WithLevel(SARIFLevel(f.Severity)).
		WithMessage(sarif.NewTextMessage(f.Message))
	res.AddLocation(p.location(f))
	res.WithPartialFingerPrints(map[string]interface{}{fingerprintKey: Fingerprint(f)})
	if f.Suppression != nil {
		// go-sarif writes unset suppression fields as null, which the
		// schema rejects: every field is set. The location is the config
		// file that holds the suppression (the finding's own when unknown);
		// the guid is derived from the finding and the reason, so it is
		// stable across runs.
		where := p.location(f)
		if f.Suppression.Source != "" {
			where = sarif.NewLocationWithPhysicalLocation(
				sarif.NewPhysicalLocation().WithArtifactLocation(p.artifact(f.Suppression.Source)))
		}
		res.AddSuppression(sarif.NewSuppression("external").
			WithStatus("accepted").
			WithJustifcation(f.Suppression.Reason).
			WithLocation(where).
			WithGuid(guid(Fingerprint(f) + "|" + f.Suppression.Reason)))
	}
	props := sarif.NewPropertyBag()
	props.AddString("store", relPath(p.base, f.StorePath))
	props.AddString("shape", string(f.Shape))
	for _, kv := range [][2]string{
		{"session", f.SessionID}, {"message", f.MessageID}, {"part", f.PartID},
		{"table", f.Location.Table},
		{"fix", f.Fix},
		{"providerError", f.ProviderError}, {"index", f.Index}, {"errorType", f.ErrorType},
	} {
		if kv[1] != "" {
			props.AddString(kv[0], kv[1])
		}
	}
	if f.Location.RowID != 0 {
		props.AddInteger("rowid", int(f.Location.RowID))
	}
	props.AddBoolean("fixable", fixable(f))
	res.AttachPropertyBag(props)
	return res
}

// location is the record's file (or database) with the record's line, and
// the session/message/part as a logical location.
func (p sarifPrinter) location(f scan.Finding) *sarif.Location {
	path := f.Location.Path
	if path == "" {
		path = f.StorePath
	}
	phys := sarif.NewPhysicalLocation().WithArtifactLocation(p.artifact(path))
	if f.Location.Line > 0 {
		phys.WithRegion(sarif.NewRegion().WithStartLine(f.Location.Line))
	}
	loc := sarif.NewLocationWithPhysicalLocation(phys)
	if ids := idPath(f.SessionID, f.MessageID, f.PartID); ids != "" {
		last := ids[strings.LastIndex(ids, "/")+1:]
		kind := "object"
		if f.Location.Table != "" {
			kind = "element"
		}
		loc.AddLogicalLocations(sarif.NewLogicalLocation().WithName(last).WithFullyQualifiedName(ids).WithKind(kind))
	}
	return loc
}

func (p sarifPrinter) artifact(path string) *sarif.ArtifactLocation {
	rel := relPath(p.base, path)
	a := sarif.NewSimpleArtifactLocation(fileURI(rel))
	if !strings.HasPrefix(rel, "/") {
		a.WithUriBaseId(srcRoot)
	}
	return a
}

// fileURI turns a slash path into a URI reference: relative paths stay
// relative, absolute ones become file:// URIs; characters URIs reserve are
// escaped.
func fileURI(p string) string {
	esc := strings.NewReplacer("%", "%25", " ", "%20", "#", "%23", "?", "%3F")
	if strings.HasPrefix(p, "/") {
		return "file://" + esc.Replace(p)
	}
	if len(p) > 1 && p[1] == ':' { // a Windows drive path made slashed
		return "file:///" + esc.Replace(p)
	}
	return esc.Replace(p)
}

// relPath returns p relative to base when p is inside base, with forward
// slashes; otherwise p itself with forward slashes.
func relPath(base, p string) string {
	if p == "" {
		return ""
	}
	if base != "" && filepath.IsAbs(p) {
		if rel, err := filepath.Rel(base, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			p = rel
		}
	} else if !filepath.IsAbs(p) {
		p = filepath.Clean(p)
	}
	return filepath.ToSlash(p)
}

// guid derives a name-based (version 5 layout) UUID from s.
func guid(s string) string {
	sum := sha256.Sum256([]byte(s))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Fingerprint identifies a finding across runs: its code and the ids of its
// session, message and part (or, for findings without ids, its location).
// Line numbers are left out so that edits elsewhere in an export file do
// not make a known finding look new.
func Fingerprint(f scan.Finding) string {
	key := strings.Join([]string{f.Code, f.SessionID, f.MessageID, f.PartID}, "|")
	if f.MessageID == "" && f.PartID == "" {
		// The file name, not the whole path: the same repository checked
		// out elsewhere must give the same fingerprint.
		key += "|" + filepath.Base(f.Location.Path) + "|" + f.Location.Table
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}
