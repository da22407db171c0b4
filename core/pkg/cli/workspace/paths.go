package workspace

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
)

// Workspace paths are colon separated lists of segments, e.g. "root:org:team".
// The helpers in this file are pure string arithmetic on such paths and on the
// kubeconfig server URLs that carry them (https://host:port/clusters/<path>).

const (
	// rootPath is the path of the root workspace.
	rootPath = "root"
	// clustersPrefix is the URL path element that precedes a workspace path.
	clustersPrefix = "/clusters/"
)

// segmentRE matches one path segment. It accepts every kcp workspace and
// logical cluster name ([a-z0-9]([a-z0-9-]*[a-z0-9])?) and, deliberately, a few
// more characters that can show up in home workspace paths derived from user
// names. The server stays authoritative: unknown names are answered with 404.
var segmentRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._@+-]*[A-Za-z0-9])?$`)

// splitPath returns the segments of p; the empty path has no segments.
func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ":")
}

// joinPath appends child (one or more segments) to parent.
func joinPath(parent, child string) string {
	switch {
	case parent == "":
		return child
	case child == "":
		return parent
	}
	return parent + ":" + child
}

// parentPath returns the path without its last segment and whether there was
// a parent at all ("root" has none).
func parentPath(p string) (string, bool) {
	i := strings.LastIndex(p, ":")
	if i < 0 {
		return "", false
	}
	return p[:i], true
}

// baseName returns the last segment of p.
func baseName(p string) string {
	return p[strings.LastIndex(p, ":")+1:]
}

// rootOf returns the first segment of p, i.e. the root of its hierarchy.
func rootOf(p string) string {
	if i := strings.Index(p, ":"); i >= 0 {
		return p[:i]
	}
	return p
}

// validPath reports whether p is a non-empty absolute path with sane segments.
func validPath(p string) bool {
	if p == "" {
		return false
	}
	for _, s := range splitPath(p) {
		if !segmentRE.MatchString(s) {
			return false
		}
	}
	return true
}

// resolveDots removes "." segments and applies ".." segments. Going above the
// top of the hierarchy is an error.
func resolveDots(p string) (string, error) {
	var out []string
	for _, s := range splitPath(p) {
		switch s {
		case ".":
		case "..":
			if len(out) <= 1 {
				return "", fmt.Errorf("cannot go up from the root workspace")
			}
			out = out[:len(out)-1]
		default:
			out = append(out, s)
		}
	}
	return strings.Join(out, ":"), nil
}

// normalizeName turns the argument of "kubectl ws <name>" into the canonical
// spelling used by resolveTarget:
//   - a leading home directory (the shell expanded "~") becomes "~" again,
//   - "/" separators become ":",
//   - "root" and "root:..." get a leading ":" (they are absolute, as in kcp);
//     legacy reports that this legacy spelling was used.
func normalizeName(name, homeDir string) (normalized string, legacy bool) {
	if homeDir != "" && homeDir != "/" && (name == homeDir || strings.HasPrefix(name, homeDir+"/")) {
		name = "~" + strings.TrimPrefix(name, homeDir)
	}
	name = strings.ReplaceAll(name, "/", ":")
	if name == rootPath || strings.HasPrefix(name, rootPath+":") {
		return ":" + name, true
	}
	return name, false
}

// resolveTarget computes the absolute path that name (already normalized, with
// "~" expanded) designates when the current workspace is current. A leading
// ":" makes name absolute; otherwise it is relative to current. "." and ".."
// segments are applied.
func resolveTarget(current, name string) (string, error) {
	var abs string
	if strings.HasPrefix(name, ":") {
		abs = strings.TrimPrefix(name, ":")
	} else {
		if current == "" {
			return "", fmt.Errorf("cannot resolve relative workspace %q without a current workspace", name)
		}
		abs = joinPath(current, name)
	}
	p, err := resolveDots(abs)
	if err != nil {
		return "", err
	}
	if !validPath(p) {
		return "", fmt.Errorf("invalid workspace path: %s", name)
	}
	return p, nil
}

// parseClusterURL splits a server URL like https://host:6443/prefix/clusters/root:a
// into the base URL (https://host:6443/prefix) and the workspace path (root:a).
func parseClusterURL(server string) (*url.URL, string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, "", err
	}
	if u.Scheme == "" || u.Host == "" {
		return nil, "", fmt.Errorf("URL %q is not absolute", server)
	}
	p := strings.TrimSuffix(u.Path, "/")
	i := strings.LastIndex(p, clustersPrefix)
	if i < 0 {
		return nil, "", fmt.Errorf("URL %q does not point to a workspace", server)
	}
	cluster := p[i+len(clustersPrefix):]
	if cluster == "" || strings.Contains(cluster, "/") || !validPath(cluster) {
		return nil, "", fmt.Errorf("URL %q does not point to a workspace", server)
	}
	base := *u
	base.Path = p[:i]
	base.RawPath = ""
	base.RawQuery = ""
	base.Fragment = ""
	return &base, cluster, nil
}

// clusterURL is the inverse of parseClusterURL.
func clusterURL(base *url.URL, p string) string {
	u := *base
	u.Path = strings.TrimSuffix(u.Path, "/") + clustersPrefix + p
	u.RawPath = ""
	return u.String()
}

// parseTypeRef parses the --type flag of "create": "universal" names a type
// that the server resolves, "root:universal" (the last segment is the name)
// also carries the path of the workspace defining the type. Empty means the
// server's default.
func parseTypeRef(s string) *tenancyv1alpha1.WorkspaceTypeReference {
	if s == "" {
		return nil
	}
	s = strings.TrimPrefix(s, ":")
	ref := &tenancyv1alpha1.WorkspaceTypeReference{}
	if i := strings.LastIndex(s, ":"); i >= 0 {
		ref.Path = s[:i]
		ref.Name = tenancyv1alpha1.WorkspaceTypeName(strings.ToLower(s[i+1:]))
	} else {
		ref.Name = tenancyv1alpha1.WorkspaceTypeName(strings.ToLower(s))
	}
	return ref
}

// typeString renders a type reference like kcp: "root:universal", or just the
// name when the path is unknown.
func typeString(ref *tenancyv1alpha1.WorkspaceTypeReference) string {
	if ref == nil {
		return ""
	}
	return joinPath(ref.Path, string(ref.Name))
}
