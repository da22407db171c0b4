package main

import "github.com/meshplane/meshplane/charts"

// embeddedCharts is the charts directory tree `install` uses without
// --chart: every chart of charts/, the umbrella chart meshplane among them.
var embeddedCharts = charts.FS
