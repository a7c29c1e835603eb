#pragma once
// The report pages' own CSS and JavaScript, embedded at build time from reports/web/ (where they are
// edited, linted and highlighted as what they are) by cmake/embed_files.cmake.
namespace cuset::web {

extern const char* const sortableTablesJs;  // sortable_tables.js: click a header of table.sortable to sort it
extern const char* const pageCss;           // page.css: every page's base style
extern const char* const reportCss;         // report.css: report.html
extern const char* const reportJs;          // report.js: report.html's filters and candidate view
extern const char* const leaderboardCss;    // leaderboard.css: leaderboard.html
extern const char* const leaderboardJs;     // leaderboard.js: leaderboard.html's grid, cells and head-to-head
extern const char* const analysisCss;       // analysis.css: the token heat map of analysis.html

}  // namespace cuset::web
