package manifest

import (
	"regexp"
	"strconv"
	"sync"
)

// pep440 matches a version as Python's packaging.version reads it, which
// Airbyte uses for a manifest's version: 6.1.0, v6.1, 7.0.0rc1, 1!2.0.post1.
// Compiled on first use, not at package init (README, Start-up).
var pep440 = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*v?(?:\d+!)?(\d+)(?:\.(\d+))?(?:\.\d+)*` +
		`(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?` +
		`(?:-\d+|[-_.]?(?:post|rev|r)[-_.]?\d*)?` +
		`(?:[-_.]?dev[-_.]?\d*)?` +
		`(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$`)
})

// version checks the manifest's version as Airbyte's declarative source
// does: it must be a version, and not one from before 0.29, whose language
// changed incompatibly.
func (d *decoder) version(v string) {
	m := pep440().FindStringSubmatch(v)
	if m == nil {
		d.fail("manifest.version", "%q is not a valid version (such as 6.1.0)", v)
		return
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major == 0 && minor < 29 {
		d.fail("manifest.version", "%s is older than 0.29.0, when the low-code language changed incompatibly: it cannot run here", v)
	}
}
