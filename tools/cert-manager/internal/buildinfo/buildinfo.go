// Package buildinfo reports which cert-manager release this binary was built from.
package buildinfo

import (
	"runtime/debug"

	"github.com/cert-manager/cert-manager/pkg/util"
)

const module = "github.com/cert-manager/cert-manager"

// Version is the version of the cert-manager root module linked into this binary, read
// from the build information Go embeds (the pin in tools/cert-manager/go.mod), or
// "unknown" when the binary carries none.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == module {
			return dep.Version
		}
	}
	return "unknown"
}

// Apply stamps the version into cert-manager's util.AppVersion, which the controllers put
// in their User-Agent and field-manager names (upstream stamps it with -ldflags -X), and
// returns it.
func Apply() string {
	util.AppVersion = Version()
	return util.AppVersion
}
