package mockstream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

type testConfig struct{ reply string }

// startEcho starts a server that rejects requests to /bad with 418 and
// streams cfg.reply to others in two frames, reaching "half" between them.
func startEcho(reply string) *Server[string, string, testConfig] {
	var s *Server[string, string, testConfig]
	s = Start(testConfig{reply: reply}, nil, func(w http.ResponseWriter, hr *http.Request, c *Call[string, string], cfg testConfig) {
		s.Update(c, func(c *Call[string, string]) { c.Parsed = string(c.Body); c.Chat = true })
		if hr.URL.Path == "/bad" {
			s.Reject(hr.Context(), w, c, "no teapot", func(w http.ResponseWriter) {
				w.WriteHeader(http.StatusTeapot)
				_, _ = io.WriteString(w, "refused")
			})
			return
		}
		s.Accept(hr.Context(), c, cfg.reply)
		w.WriteHeader(http.StatusOK)
		out := s.Stream(hr.Context(), w, c, 0)
		out.Frame([]byte(cfg.reply[:1]))
		out.Reach("half")
		out.Frame([]byte(cfg.reply[1:]))
		out.Reach(Done)
	})
	return s
}

func post(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerRecordsAcceptsAndRejects(t *testing.T) {
	s := startEcho("hello")
	defer s.Close()
	if code, body := post(t, s.URL()+"/ok"); code != http.StatusOK || body != "hello" {
		t.Fatalf("accepted answer %d %q", code, body)
	}
	if code, body := post(t, s.URL()+"/bad"); code != http.StatusTeapot || body != "refused" {
		t.Fatalf("rejected answer %d %q", code, body)
	}
	calls := s.Requests()
	if len(calls) != 2 || len(s.ChatRequests()) != 2 {
		t.Fatalf("calls %+v", calls)
	}
	ok, bad := calls[0], calls[1]
	if ok.Verdict != VerdictAccepted || ok.Turn != "hello" || ok.Parsed != "body" ||
		strings.Join(stageNames(ok.Stages), ",") != "received,half,done" {
		t.Fatalf("accepted call %+v", ok)
	}
	if bad.Verdict != VerdictRejected || bad.Error != "no teapot" || !bad.Reached(Rejected) {
		t.Fatalf("rejected call %+v", bad)
	}
	if r := s.Rejected(); len(r) != 1 || r[0].Index != 1 {
		t.Fatalf("rejected %+v", r)
	}
}

func stageNames(st []Stage) []string {
	out := make([]string, len(st))
	for i, s := range st {
		out[i] = string(s)
	}
	return out
}

func TestServerConfigureAppliesToLaterRequests(t *testing.T) {
	s := startEcho("first")
	defer s.Close()
	p := s.Pause("half", s.NthChat(0))
	done := make(chan string)
	go func() {
		resp, err := http.Post(s.URL()+"/ok", "text/plain", strings.NewReader("body"))
		if err != nil {
			done <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- string(b)
	}()
	<-p.Held()
	s.Configure(func(c *testConfig) { c.reply = "second" })
	p.Release()
	if body := <-done; body != "first" {
		t.Fatalf("request in flight answered %q after Configure", body)
	}
	if _, body := post(t, s.URL()+"/ok"); body != "second" {
		t.Fatalf("later request answered %q", body)
	}
	if s.Config().reply != "second" {
		t.Fatalf("config %+v", s.Config())
	}
	if _, err := s.WaitStage(context.Background(), Done, s.NthChat(1)); err != nil {
		t.Fatal(err)
	}
}
