package ocschemagen

import (
	"context"
	"fmt"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// OpenAPIFile is the capture's file name under pkg/ocschema/testdata.
const OpenAPIFile = "openapi-" + SDKVersion + ".json"

// CaptureOpenAPI starts `opencode serve` of opencode-ai@SDKVersion in a
// throw-away home (installing the release into .cache/ when needed) and
// returns the record schemas of the OpenAPI document it serves.
func CaptureOpenAPI(ctx context.Context) (*OpenAPI, error) {
	e, err := opencodetest.New(opencodetest.Options{Version: SDKVersion})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	srv, err := e.Serve(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.Kill()
	code, body, err := srv.Get(ctx, "/doc")
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("GET /doc: HTTP %d: %.300s", code, body)
	}
	return SubsetOpenAPI(body, SDKVersion)
}

// Generate builds pkg/ocschema's schema_gen.go from the SDK (fetched, or
// read from .cache/) and the committed OpenAPI capture.
func Generate(openapi []byte) ([]byte, error) {
	oa, err := ParseOpenAPI(openapi)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", OpenAPIFile, err)
	}
	if oa.OpenCode != SDKVersion {
		return nil, fmt.Errorf("%s was captured from OpenCode %s, the SDK is %s", OpenAPIFile, oa.OpenCode, SDKVersion)
	}
	sdk, err := FetchSDKTypes()
	if err != nil {
		return nil, err
	}
	s, err := Build(sdk, oa)
	if err != nil {
		return nil, err
	}
	return Emit(s, Sources{SDKVersion: SDKVersion, SDKIntegrity: SDKIntegrity, OpenAPIName: "testdata/" + OpenAPIFile, OpenAPI: openapi})
}
