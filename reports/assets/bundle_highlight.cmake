# Builds report-assets.js and report-assets.css from Debian's node-highlight.js (highlight.js's core
# and per-language CommonJS modules): the core plus the languages reports show (CUDA C++, Python),
# wrapped so that a browser gets window.hljs. A few tens of KB instead of the 850 KB all-languages
# bundle of libjs-highlight.js, inlined into every report.html.
#   cmake -DHLJS=/usr/share/nodejs/highlight.js -DOUT=dir -P bundle_highlight.cmake
file(READ "${HLJS}/lib/highlight.js" core)
set(js "/* highlight.js (BSD-3-Clause) from Debian's node-highlight.js: core, cpp, python */\n(function () {\n")
string(APPEND js "var module = {}, exports = {};\n${core}\nvar hljs = module.exports;\n")
foreach(language cpp python)
  file(READ "${HLJS}/lib/languages/${language}.js" definition)
  string(APPEND js "hljs.registerLanguage('${language}', (function () { var module = {};\n${definition}\nreturn module.exports; })());\n")
endforeach()
# highlight.js 9 names it highlightBlock; the report calls the 10.7+ name. Its end-of-life notice would
# go to the reader's console on every page: Debian, not upstream, maintains this copy (decision 104).
string(APPEND js "if (!hljs.highlightElement) hljs.highlightElement = hljs.highlightBlock;\n"
                 "hljs.configure({hideUpgradeWarningAcceptNoSupportOrSecurityUpdates: true});\nwindow.hljs = hljs;\n})();\n")
file(WRITE "${OUT}/report-assets.js" "${js}")
file(COPY_FILE "${HLJS}/styles/github.css" "${OUT}/report-assets.css")
