package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// postJSON is gqlgen's POST transport with the answer of a successful
// operation written directly. The executor's data is JSON already; gqlgen
// would marshal the response with encoding/json, which validates and
// copies that data once more (a tenth of the gateway's CPU on a list of
// 100 objects). Requests that fail before execution go to gqlgen's own
// POST, so errors, status codes and headers stay exactly gqlgen's.
type postJSON struct {
	fallback transport.POST
}

var _ graphql.Transport = postJSON{}

func (t postJSON) Supports(r *http.Request) bool { return t.fallback.Supports(r) }

func (t postJSON) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	body, err := io.ReadAll(r.Body)
	again := func() {
		r.Body = io.NopCloser(bytes.NewReader(body))
		t.fallback.Do(w, r, exec)
	}
	if err != nil {
		again()
		return
	}
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		again()
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx := r.Context()
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		again()
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	resp := responses(ctx)
	b := encodeResponse(resp)
	w.Header().Set("Content-Type", responseContentType(r))
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// responseContentType is the media type gqlgen's POST answers with: the
// first of application/json and application/graphql-response+json the
// client accepts (application/json for none, */* or application/*).
func responseContentType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return "application/json"
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", "application/json":
			return "application/json"
		case "application/graphql-response+json":
			return "application/graphql-response+json"
		}
	}
	return "application/graphql-response+json"
}

// encodeResponse writes resp as encoding/json would (same keys, same
// order), with its data copied as it is: the executor writes it from the
// core's JSON answers (never re-validated: they come from the core's own
// encoder) and its own escaping.
func encodeResponse(resp *graphql.Response) []byte {
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		b, _ := json.Marshal(resp)
		return b
	}
	var buf bytes.Buffer
	buf.Grow(len(resp.Data) + 64)
	buf.WriteByte('{')
	if len(resp.Errors) > 0 {
		e, _ := json.Marshal(resp.Errors)
		buf.WriteString(`"errors":`)
		buf.Write(e)
		buf.WriteByte(',')
	}
	buf.WriteString(`"data":`)
	if len(resp.Data) == 0 {
		buf.WriteString("null")
	} else {
		buf.Write(resp.Data)
	}
	if len(resp.Extensions) > 0 {
		x, _ := json.Marshal(resp.Extensions)
		buf.WriteString(`,"extensions":`)
		buf.Write(x)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
