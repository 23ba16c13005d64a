// One Lighthouse run of a page with the reader's system colour scheme emulated, for
// lighthouse_audit.py --scheme dark: Lighthouse's command line cannot emulate
// prefers-color-scheme, and Chromium's --force-dark-mode and
// --blink-settings=preferredColorScheme=0 did not change it here (headless Chromium 156).
// Lighthouse's Node API runs on a Puppeteer page instead, whose media emulation
// (CDP Emulation.setEmulatedMedia) lasts through Lighthouse's navigation
// (https://github.com/GoogleChrome/lighthouse/blob/main/docs/puppeteer.md).
//
// Usage: node lighthouse_scheme.mjs NODE_MODULES URL SCHEME REPORT CATEGORIES CHROME_FLAGS [CPU_SLOWDOWN]
//   NODE_MODULES: the folder holding lighthouse (and its puppeteer-core); SCHEME: dark or
//   light; REPORT: where the JSON report goes (the command line's --output=json shape);
//   CATEGORIES: comma-separated; CHROME_FLAGS: space-separated; CPU_SLOWDOWN: Lighthouse's
//   throttling.cpuSlowdownMultiplier (default 4, Lighthouse's own).
// Exits 1 when the page is not in the scheme Material should have chosen, read from
// <body data-md-color-scheme> after the run ("slate" for dark, "default" for light).
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modules, url, scheme, report, categories, flags, cpuSlowdown = "4"] = process.argv.slice(2);
const require = createRequire(join(modules, "resolve-from-here.js"));
const { default: puppeteer } = await import(pathToFileURL(require.resolve("puppeteer-core")).href);
const { default: lighthouse } = await import(pathToFileURL(join(modules, "lighthouse", "core", "index.js")).href);
const MATERIAL = { dark: "slate", light: "default" };  // mkdocs.yml theme.palette

const browser = await puppeteer.launch({
  executablePath: process.env.CHROME_PATH || "/usr/bin/chromium",
  headless: "new",
  args: flags.split(" ").filter((flag) => flag && !flag.startsWith("--headless")),
});
try {
  const page = await browser.newPage();
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
  const result = await lighthouse(url, { onlyCategories: categories.split(","), output: "json", logLevel: "error",
    throttling: { cpuSlowdownMultiplier: Number(cpuSlowdown) } }, undefined, page);
  const seen = await page.evaluate(() => document.body.dataset.mdColorScheme);
  if (seen !== MATERIAL[scheme]) {
    console.error(`${url}: the page is in Material's '${seen}' scheme, not '${MATERIAL[scheme]}' (${scheme}); ` +
      "the emulation of prefers-color-scheme did not reach it");
    process.exitCode = 1;
  }
  writeFileSync(report, result.report);
} finally {
  await browser.close();
}
