package mockstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
)

type call = Call[string, int]

func TestPauseHoldsUntilRelease(t *testing.T) {
	l := NewLog[string, int](nil)
	c := l.Record(httptest.NewRequest("POST", "/x?alt=sse", nil), []byte("{}"))
	l.Update(c, func(c *call) { c.Chat = true; c.Parsed = "req" })
	p := l.Pause("middle", func(c *call) bool { return c.Chat })

	done := make(chan struct{})
	go func() {
		l.Reach(context.Background(), c, "start")
		l.Reach(context.Background(), c, "middle")
		l.Reach(context.Background(), c, "end")
		close(done)
	}()
	got := <-p.Reached()
	<-p.Held()
	if got.Parsed != "req" || !reflect.DeepEqual(got.Stages, []Stage{"start", "middle"}) {
		t.Fatalf("held call %+v", got)
	}
	select {
	case <-done:
		t.Fatal("stream went on past the pause")
	case <-time.After(50 * time.Millisecond):
	}
	p.Release()
	<-done
	calls := l.Calls()
	if len(calls) != 1 || calls[0].Query != "alt=sse" || !calls[0].Reached("end") {
		t.Fatalf("calls %+v", calls)
	}
}

func TestPauseFiresOnceAndOnlyOnMatch(t *testing.T) {
	l := NewLog[string, int](nil)
	a := l.Record(httptest.NewRequest("POST", "/", nil), nil)
	b := l.Record(httptest.NewRequest("POST", "/", nil), nil)
	l.Update(b, func(c *call) { c.Chat = true })
	p := l.Pause("s", l.NthChat(0))
	l.Reach(context.Background(), a, "s") // not chat: passes
	go l.Reach(context.Background(), b, "s")
	if got := <-p.Reached(); got.Index != 1 {
		t.Fatalf("held %d", got.Index)
	}
	p.Release()
	c := l.Record(httptest.NewRequest("POST", "/", nil), nil)
	l.Update(c, func(c *call) { c.Chat = true })
	l.Reach(context.Background(), c, "s") // the pause already fired: passes
}

func TestCloseReleasesPauses(t *testing.T) {
	l := NewLog[string, int](nil)
	c := l.Record(httptest.NewRequest("POST", "/", nil), nil)
	l.Pause("s", nil)
	done := make(chan struct{})
	go func() { l.Reach(context.Background(), c, "s"); close(done) }()
	time.Sleep(10 * time.Millisecond)
	l.Close()
	<-done
}

func TestWaitStage(t *testing.T) {
	l := NewLog[string, int](nil)
	c := l.Record(httptest.NewRequest("POST", "/", nil), nil)
	l.Update(c, func(c *call) { c.Verdict = VerdictRejected; c.Error = "no" })
	go func() {
		time.Sleep(10 * time.Millisecond)
		l.Reach(context.Background(), c, Rejected)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := l.WaitStage(ctx, Rejected, nil)
	if err != nil || got.Error != "no" {
		t.Fatalf("%+v %v", got, err)
	}
	if r := l.Rejected(); len(r) != 1 {
		t.Fatalf("rejected %v", r)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := l.WaitStage(ctx2, "never", nil); err == nil {
		t.Fatal("waiting for a stage never reached returned")
	}
}

func TestWriterStopsWhenClientGoes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	w := NewWriter(ctx, rec, 0)
	w.Frame([]byte("a"))
	cancel()
	w.Frame([]byte("b"))
	if w.Alive() || rec.Body.String() != "a" || !rec.Flushed {
		t.Fatalf("alive %v body %q flushed %v", w.Alive(), rec.Body.String(), rec.Flushed)
	}
}

func TestListenLoopback(t *testing.T) {
	srv := Listen(http.NotFoundHandler())
	defer srv.Close()
	if got := srv.Listener.Addr().String(); got[:10] != "127.0.0.1:" {
		t.Fatalf("listening on %s", got)
	}
}

func TestToolMarkers(t *testing.T) {
	got := ToolMarkers(`run [[tool:bash echo hi]] and [[tool:read {"filePath":"/x"}]] and [[tool:glob *.go]]`)
	want := []ToolCall{
		{"bash", map[string]any{"command": "echo hi", "description": "Run echo hi"}},
		{"read", map[string]any{"filePath": "/x"}},
		{"glob", map[string]any{"input": "*.go"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	if ToolMarkers("no markers") != nil {
		t.Fatal("markers found in plain text")
	}
}

func TestChunks(t *testing.T) {
	if got := Chunks("héllo wörld", 3); len(got) < 3 || got[0]+got[1] == "" {
		t.Fatalf("%q", got)
	}
	joined := ""
	for _, c := range Chunks("héllo wörld", 3) {
		joined += c
	}
	if joined != "héllo wörld" {
		t.Fatalf("joined %q", joined)
	}
}
