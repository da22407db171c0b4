package main

import "io/fs"

// embeddedCharts is the charts directory tree `install` uses without
// --chart: charts.FS of github.com/meshplane/meshplane/charts once that
// module is part of the workspace; until then --chart is required.
var embeddedCharts fs.FS
