/** @tickwise/report: Vega-Lite specs, HTML/Markdown reports, Perfetto export, notebooks. */
export {};
