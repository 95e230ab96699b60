package iostreams

import (
	"testing"
)

func TestColorDecision(t *testing.T) {
	tests := []struct {
		name string
		mode string
		env  map[string]string
		tty  bool
		want bool
	}{
		{"auto tty", ColorAuto, nil, true, true},
		{"auto piped", ColorAuto, nil, false, false},
		{"always piped", ColorAlways, nil, false, true},
		{"always beats NO_COLOR", ColorAlways, map[string]string{"NO_COLOR": "1"}, true, true},
		{"never tty", ColorNever, nil, true, false},
		{"never beats force", ColorNever, map[string]string{"CLICOLOR_FORCE": "1"}, true, false},
		{"NO_COLOR any value", ColorAuto, map[string]string{"NO_COLOR": "0"}, true, false},
		{"NO_COLOR empty is unset", ColorAuto, map[string]string{"NO_COLOR": ""}, true, true},
		{"NO_COLOR beats force", ColorAuto, map[string]string{"NO_COLOR": "x", "FORCE_COLOR": "1"}, false, false},
		{"CLICOLOR_FORCE piped", ColorAuto, map[string]string{"CLICOLOR_FORCE": "1"}, false, true},
		{"FORCE_COLOR piped", ColorAuto, map[string]string{"FORCE_COLOR": "3"}, false, true},
		{"FORCE_COLOR=0 is not force", ColorAuto, map[string]string{"FORCE_COLOR": "0"}, false, false},
		{"force beats dumb", ColorAuto, map[string]string{"FORCE_COLOR": "1", "TERM": "dumb"}, false, true},
		{"TERM=dumb tty", ColorAuto, map[string]string{"TERM": "dumb"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := Test()
			ios.SetStdoutTTY(tt.tty)
			ios.SetEnv(tt.env)
			if err := ios.SetColorMode(tt.mode); err != nil {
				t.Fatal(err)
			}
			if got := ios.ColorEnabled(); got != tt.want {
				t.Errorf("ColorEnabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestColorDecidedOnce(t *testing.T) {
	ios, _, _, _ := Test()
	ios.SetStdoutTTY(true)
	if !ios.ColorEnabled() {
		t.Fatal("want colour on a terminal")
	}
	ios.SetEnv(map[string]string{"NO_COLOR": "1"})
	if !ios.ColorEnabled() {
		t.Error("decision changed after it was made")
	}
}

func TestSetColorModeRejectsUnknown(t *testing.T) {
	ios, _, _, _ := Test()
	if err := ios.SetColorMode("sometimes"); err == nil {
		t.Error("want an error for --color sometimes")
	}
}

func TestProgressOnlyOnTerminal(t *testing.T) {
	ios, _, _, errOut := Test()
	if p := ios.StartProgress("scanning", "sessions"); p != nil {
		t.Error("progress started while stderr is not a terminal")
	}
	ios.SetStderrTTY(true)
	ios.SetQuiet(true)
	if p := ios.StartProgress("scanning", "sessions"); p != nil {
		t.Error("progress started while quiet")
	}
	var p *Progress
	p.Update(1, 2) // nil progress is a no-op
	p.Stop()
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q, want nothing", errOut.String())
	}
}

func TestProgressDrawAndClear(t *testing.T) {
	ios, _, _, errOut := Test()
	p := newProgress(ios.ErrOut, "scanning", "sessions")
	p.draw()
	p.Update(120, 3400)
	p.draw()
	p.Stop() // no loop goroutine in this test: Stop only erases the line
	p.draw() // after Stop nothing is drawn
	want := "\r\x1b[K- scanning" + "\r\x1b[K\\ scanning 120/3400 sessions" + "\r\x1b[K"
	if got := errOut.String(); got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

func TestProgressStopBeforeDelayPrintsNothing(t *testing.T) {
	ios, _, _, errOut := Test()
	ios.SetStderrTTY(true)
	p := newProgress(ios.ErrOut, "scanning", "sessions")
	p.wg.Add(1)
	go p.loop(24 * 3600 * 1e9) // a day: the delay cannot pass before Stop
	p.Update(1, 1)
	p.Stop()
	p.Stop()
	if errOut.Len() != 0 {
		t.Errorf("stderr = %q, want nothing for work faster than the delay", errOut.String())
	}
}
