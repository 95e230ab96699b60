package ocschemagen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func loadSources(t *testing.T) ([]byte, *OpenAPI) {
	t.Helper()
	sdk, err := FetchSDKTypes()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "pkg", "ocschema", "testdata", OpenAPIFile))
	if err != nil {
		t.Fatal(err)
	}
	oa, err := ParseOpenAPI(b)
	if err != nil {
		t.Fatal(err)
	}
	return sdk, oa
}

// TestBuildRefusesDisagreement: the two sources must agree on every key.
func TestBuildRefusesDisagreement(t *testing.T) {
	sdk, oa := loadSources(t)
	if _, err := Build(sdk, oa); err != nil {
		t.Fatalf("the committed sources disagree: %v", err)
	}
	user := oa.Schemas["UserMessage"]
	req := user["required"].([]any)
	user["required"] = slices.DeleteFunc(slices.Clone(req), func(v any) bool { return v == "agent" })
	_, err := Build(sdk, oa)
	if err == nil || !strings.Contains(err.Error(), "UserMessage.agent") {
		t.Fatalf("a key optional in one source and required in the other: %v", err)
	}
	user["required"] = req
	tsMissing := strings.Replace(string(sdk), "    agent: string;\n    model: {", "    model: {", 1)
	if _, err := Build([]byte(tsMissing), oa); err == nil || !strings.Contains(err.Error(), "UserMessage") {
		t.Fatalf("a key in one source only: %v", err)
	}
}

func TestParseTS(t *testing.T) {
	d := newTSDecls("export type A = {\n    a?: Array<\"x\" | \"y\">;\n    b: {\n        [key: string]: unknown;\n    };\n    c: B[];\n};\nexport type B = string | null;\nexport type C = Foo<string>;\n")
	a, err := d.get("A")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.props) != 3 || !a.props[0].optional || a.props[0].typ.kind != tsArray || a.props[0].typ.elem.kind != tsUnion ||
		a.props[1].typ.index == nil || a.props[2].typ.kind != tsArray || a.props[2].typ.elem.name != "B" {
		t.Fatalf("%+v", a)
	}
	if _, err := d.get("C"); err == nil {
		t.Fatal("generic types must be refused")
	}
	if _, err := d.get("D"); err == nil {
		t.Fatal("an unknown name must be an error")
	}
}
