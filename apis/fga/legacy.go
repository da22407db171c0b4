package fga

import (
	"strings"

	"github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// Ids written before the escaped format (ids.go) were
// "<type>:<cluster>/<name>" with nothing escaped but ":" written as ".",
// users "user:<name>" the same way, and an object id over 256 characters
// ended in "-" and 8 hex digits of a hash. What can be read back from
// them is rewritten by MigrateID; what cannot is left alone, and then
// matches no Check (fail closed):
//
//   - a "." may have been a ":": it is kept as a "." except in
//     "user:system.serviceaccount.<ns>.<name>", which is the service
//     account system:serviceaccount:<ns>:<name> (also Platform Mesh's
//     spelling, so a tuple written for Platform Mesh keeps its meaning);
//   - a namespaced object's old id names no namespace;
//   - an old shortened id cannot be read back.

// legacyServiceAccount starts the old id of a service account user.
const legacyServiceAccount = UserType + ":system.serviceaccount."

// MigrateID returns the current spelling of an object, user or userset id
// written in the format before the escaped ids, and whether it changed.
// An id in the current format comes back unchanged, so migrating twice
// changes nothing.
func MigrateID(id string) (string, bool) {
	obj, rel, isUserset := strings.Cut(id, "#")
	typ, rest, ok := strings.Cut(obj, ":")
	if !ok || typ == "" || rest == "" || rest == "*" {
		return id, false
	}
	var migrated string
	switch {
	case typ == UserType && strings.HasPrefix(obj, legacyServiceAccount):
		ns, name, ok := strings.Cut(strings.TrimPrefix(obj, legacyServiceAccount), ".")
		if !ok || ns == "" || name == "" {
			return id, false
		}
		migrated = UserID("system:serviceaccount:" + ns + ":" + name)
	case strings.ContainsAny(rest, string(escapeByte)+HashMarker):
		// Escaped or shortened: the current format (an old id with a
		// literal "|" or "*" stays as it is).
		return id, false
	case typ == UserType:
		migrated = UserID(rest)
	default:
		migrated = joinID(typ, MaxObjectLength, strings.Split(rest, "/")...)
	}
	if isUserset {
		migrated += "#" + rel
	}
	return migrated, migrated != id
}

// MigrateTuple applies MigrateID to a tuple's object and user.
func MigrateTuple(t v1alpha1.Tuple) (v1alpha1.Tuple, bool) {
	obj, a := MigrateID(t.Object)
	user, b := MigrateID(t.User)
	return v1alpha1.Tuple{Object: obj, Relation: t.Relation, User: user}, a || b
}
