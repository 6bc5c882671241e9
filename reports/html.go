package reports

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"

	"github.com/dbsock/dbsock/reports/words"
	"github.com/dbsock/dbsock/results"
)

// HTML writes r as one self-contained page, fit to keep as a CI artifact
// and open in a browser: the Markdown report (headline first, then the
// details) rendered to HTML with goldmark, and the chart inlined as SVG. No
// external assets, no JavaScript.
func HTML(w io.Writer, r *results.Report) error { return htmlContext(context.Background(), w, r) }

// htmlContext is HTML that stops drawing its chart once ctx ends.
func htmlContext(ctx context.Context, w io.Writer, r *results.Report) error {
	plain := *words.Fill(safeCopy(r))
	plain.Plot = "" // the chart is inlined, not linked
	var head, full bytes.Buffer
	writeHeadlineTo(&head, &plain)
	if err := writeMarkdown(&full, &plain); err != nil {
		return err
	}
	details := strings.TrimPrefix(full.String(), head.String())
	// Tables; raw HTML is escaped; headings get ids, which the headline's
	// links to the details name.
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithParserOptions(parser.WithAutoHeadingID()))
	var headHTML, detailsHTML bytes.Buffer
	if err := md.Convert(head.Bytes(), &headHTML); err != nil {
		return fmt.Errorf("render HTML: %w", err)
	}
	if err := md.Convert([]byte(details), &detailsHTML); err != nil {
		return fmt.Errorf("render HTML: %w", err)
	}
	chart := ""
	if len(r.Summary) > 0 {
		var svg bytes.Buffer
		// A report too thin to plot is still a page, without the chart.
		err := PlotContext(ctx, &svg, ".svg", r)
		if err == nil {
			s := svg.String()
			if i := strings.Index(s, "<svg"); i >= 0 {
				chart = s[i:]
			}
		} else if ctx.Err() != nil {
			return interrupted(ctx)
		}
	}
	return page.Execute(w, struct {
		Title         string
		Head, Details template.HTML
		Chart         template.HTML
		Started, Tool string
	}{
		Title:   "dbsock: Unix domain socket vs TCP on 127.0.0.1",
		Head:    template.HTML(headHTML.String()),    // goldmark's output, raw HTML escaped
		Details: template.HTML(detailsHTML.String()), // likewise
		Chart:   template.HTML(chart),                // gonum/plot's SVG of this report
		Started: r.StartedAt.UTC().Format("2006-01-02 15:04 UTC"),
		Tool:    plainText(r.Tool.Name + " " + r.Tool.Version), // html/template escapes it
	})
}

// writeHeadlineTo is writeHeadline into a buffer.
func writeHeadlineTo(b *bytes.Buffer, r *results.Report) {
	sb := &strings.Builder{}
	writeHeadline(sb, r)
	b.WriteString(sb.String())
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b; background: #fff; max-width: 1100px; margin: 2em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #d0d0d0; padding: 4px 8px; }
th { background: #f3f3f3; }
td[align=right], th[align=right] { text-align: right; font-variant-numeric: tabular-nums; }
blockquote { border-left: 4px solid #d95f02; margin: 1em 0; padding: 0.2em 1em; background: #fff6ef; }
code { background: #f3f3f3; padding: 0 3px; }
figure { margin: 1.5em 0; }
figure svg { max-width: 100%; height: auto; }
footer { color: #666; font-size: 13px; margin-top: 3em; }
</style>
</head>
<body>
{{.Head}}
<figure>{{.Chart}}</figure>
{{.Details}}
<footer>Written by {{.Tool}} for a run started {{.Started}}.</footer>
</body>
</html>
`))
