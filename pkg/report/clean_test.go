package report

import "testing"

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"prt_1fed54ca8001RKaY3SInFCf0Xq":    "prt_1fed54ca8001RKaY3SInFCf0Xq",
		"tab\there, ünïcödé, 日本語, a\u00a0b": "tab\there, ünïcödé, 日本語, a\u00a0b",
		"prt_\x1b[31mRED\x1b[0m\abell":      `prt_\x1b[31mRED\x1b[0m\x07bell`,
		"title \x1b]0;pwned\x07":            `title \x1b]0;pwned\x07`,
		"line\nbreak\rreturn\x7f":           `line\x0abreak\x0dreturn\x7f`,
		"rtl \u202eexe.txt":                 `rtl \u202eexe.txt`,
		"c1 \u009b31m":                      `c1 \u009b31m`,
		"bad \xff\xfe utf8":                 `bad \xff\xfe utf8`,
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCleanLines(t *testing.T) {
	for in, want := range map[string]string{
		"error\nhint: do this":        "error\nhint: do this",
		"bad \x1b[2J\nhint: \u202eok": "bad \\x1b[2J\nhint: \\u202eok",
		"cr\r\n":                      "cr\\x0d\n",
	} {
		if got := CleanLines(in); got != want {
			t.Errorf("CleanLines(%q) = %q, want %q", in, got, want)
		}
	}
}
