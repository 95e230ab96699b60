package storetest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"
)

// Image is an image a user attached: a file part with a data: URL.
type Image struct {
	Mime, Filename string
	Base64         string
}

// Image session ids: ImageSession's session, its user message (whose part i,
// from 1, is the i-th image; part 0 is the prompt's text) and its answer.
const (
	ImageSessionID = "ses_7ffffffffff0iiiiiiiiiiiiii"
	ImageUserID    = "msg_00000000000100000000000001"
	ImageAsstID    = "msg_00000000000200000000000002"
)

// ImagePartID is the id of ImageSession's i-th image part (from 1).
func ImagePartID(i int) string { return fmt.Sprintf("prt_0000000000010000000000%04d", i) }

// ImageSession is a finished Anthropic session whose first user message
// pastes the images, answered "done", made on 2026-01-01.
func ImageSession(images ...Image) *Fixture {
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	u := Message{Body: json.RawMessage(`{"id":"` + ImageUserID + `","role":"user","time":{"created":1767225601000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`)}
	u.Parts = append(u.Parts, Part{Body: json.RawMessage(`{"id":"prt_00000000000100000000000000","type":"text","text":"look at this"}`)})
	for i, im := range images {
		u.Parts = append(u.Parts, Part{Body: json.RawMessage(`{"id":"` + ImagePartID(i+1) + `","type":"file","mime":` + q(im.Mime) +
			`,"filename":` + q(im.Filename) + `,"url":` + q("data:"+im.Mime+";base64,"+im.Base64) + `}`)})
	}
	a := Message{Body: json.RawMessage(`{"id":"` + ImageAsstID + `","role":"assistant","parentID":"` + ImageUserID + `","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build",` +
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225602000,"completed":1767225603000},"finish":"stop"}`)}
	a.Parts = append(a.Parts,
		Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000ss","type":"step-start"}`)},
		Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000tx","type":"text","text":"done"}`)})
	return &Fixture{ID: ImageSessionID, Title: "images",
		Info:     json.RawMessage(`{"id":"` + ImageSessionID + `","slug":"x","directory":"/work/x","version":"1.18.33","time":{"created":1767225600000,"updated":1767225609000}}`),
		Messages: []Message{u, a}}
}

// Tool image session ids: ToolImageSession's read tool part, in the
// message ImageAsstID.
const ToolImagePartID = "prt_000000000002000000000000rd"

// ToolImageSession is a finished Anthropic session whose user asked to look
// at a file: the answer's first step calls the read tool, which returned
// the images as attachments of its completed tool part (the shape OpenCode
// 1.1.65 and 1.18.33 store, internal/opencodetest/OBSERVED.md), and the
// second step answers "done". Made on 2026-01-01.
func ToolImageSession(images ...Image) *Fixture {
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	u := Message{Body: json.RawMessage(`{"id":"` + ImageUserID + `","role":"user","time":{"created":1767225601000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`)}
	u.Parts = append(u.Parts, Part{Body: json.RawMessage(`{"id":"prt_00000000000100000000000000","type":"text","text":"look at big.png"}`)})
	var atts []string
	for i, im := range images {
		atts = append(atts, `{"id":"prt_000000000002000000000001`+fmt.Sprintf("%02d", i)+`","sessionID":"`+ImageSessionID+`","messageID":"`+ImageAsstID+
			`","type":"file","mime":`+q(im.Mime)+`,"url":`+q("data:"+im.Mime+";base64,"+im.Base64)+`}`)
	}
	asst := func(id, finish string, created int) json.RawMessage {
		return json.RawMessage(`{"id":"` + id + `","role":"assistant","parentID":"` + ImageUserID + `","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build",` +
			`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":0,"write":0}},` +
			fmt.Sprintf(`"time":{"created":%d,"completed":%d},"finish":%q}`, created, created+500, finish))
	}
	a := Message{Body: asst(ImageAsstID, "tool-calls", 1767225602000)}
	a.Parts = append(a.Parts,
		Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000ss","type":"step-start"}`)},
		Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000ra","type":"reasoning","text":"I will read it.","metadata":{"anthropic":{"signature":"c2lnbmVk"}},"time":{"start":1767225602000,"end":1767225602050}}`)},
		Part{Body: json.RawMessage(`{"id":"` + ToolImagePartID + `","type":"tool","callID":"toolu_01read","tool":"read","state":{"status":"completed",` +
			`"input":{"filePath":"/work/x/big.png"},"output":"Image read successfully","title":"big.png","metadata":{},` +
			`"time":{"start":1767225602100,"end":1767225602200},"attachments":[` + strings.Join(atts, ",") + `]}}`)},
		Part{Body: json.RawMessage(`{"id":"prt_000000000002000000000000sf","type":"step-finish","reason":"tool-calls","cost":0,"tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":0,"write":0}}}`)})
	b := Message{Body: asst("msg_00000000000300000000000003", "stop", 1767225603000)}
	b.Parts = append(b.Parts,
		Part{Body: json.RawMessage(`{"id":"prt_000000000003000000000000ss","type":"step-start"}`)},
		Part{Body: json.RawMessage(`{"id":"prt_000000000003000000000000tx","type":"text","text":"done"}`)})
	return &Fixture{ID: ImageSessionID, Title: "tool images",
		Info:     json.RawMessage(`{"id":"` + ImageSessionID + `","slug":"x","directory":"/work/x","version":"1.1.65","time":{"created":1767225600000,"updated":1767225609000}}`),
		Messages: []Message{u, a, b}}
}

// NoisyPNG is a w×h opaque PNG of noise from seed, as base64, stored
// without compression (fast to write; noise would not compress anyway):
// 3 bytes a pixel, 4 once in base64.
func NoisyPNG(t testing.TB, seed uint64, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range img.Pix {
		if i%4 == 3 {
			img.Pix[i] = 0xff
			continue
		}
		img.Pix[i] = byte(r.Uint32())
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}
