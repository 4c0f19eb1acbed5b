// The site's script: charts drawn from their inline specs by vega-embed (assets/vega.js), sortable and searchable
// tables, column names on every cell for the phone layout, and links that open the <details> they point into.
(() => {
  "use strict";

  const isBlank = (key) => key === null || key === "";
  const LONG_TABLE = 12;  // rows beyond which a table gets a search box

  function sortTable(table, header) {
    const index = header.cellIndex;
    const numeric = header.dataset.type === "number";
    const ascending = header.getAttribute("aria-sort") !== "ascending";
    for (const other of header.parentElement.cells) other.removeAttribute("aria-sort");
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const direction = ascending ? 1 : -1;
    const body = table.tBodies[0];
    const keyed = Array.from(body.rows, (row) => {
      const cell = row.cells[index];
      const sortValue = cell.dataset.sort;
      const key = numeric ? (isBlank(sortValue ?? "") ? null : Number(sortValue))
                          : cell.textContent.trim().toLowerCase();
      return { row, key };
    });
    // Blank cells go last in either direction; Array.prototype.sort is stable, so ties keep their order.
    keyed.sort((a, b) => {
      if (isBlank(a.key) || isBlank(b.key)) return isBlank(a.key) - isBlank(b.key);
      if (a.key < b.key) return -direction;
      if (a.key > b.key) return direction;
      return 0;
    });
    body.append(...keyed.map((item) => item.row));
  }

  for (const table of document.querySelectorAll("table.sortable")) {
    for (const header of table.tHead.rows[0].cells) {
      header.querySelector("button").addEventListener("click", () => sortTable(table, header));
    }
  }

  // A long sortable table without its own search box gets one (the methods page's per-benchmark tables).
  let searchCount = 0;
  for (const table of document.querySelectorAll("table.sortable")) {
    if (table.tBodies[0].rows.length <= LONG_TABLE || document.querySelector(`input[data-filter="${table.id}"]`)) continue;
    searchCount += 1;
    if (!table.id) table.id = `long-table-${searchCount}`;
    const tools = document.createElement("div");
    tools.className = "table-tools";
    tools.innerHTML = `<label for="${table.id}-filter">Search</label>` +
      `<input type="search" id="${table.id}-filter" data-filter="${table.id}" autocomplete="off">` +
      `<span class="row-count" id="${table.id}-count" aria-live="polite"></span>`;
    (table.closest(".table-wrap") || table).before(tools);
  }

  for (const input of document.querySelectorAll("input[data-filter]")) {
    const table = document.getElementById(input.dataset.filter);
    const counter = document.getElementById(`${input.dataset.filter}-count`);
    const rows = Array.from(table.tBodies[0].rows);
    counter.textContent = `${rows.length} of ${rows.length} rows`;
    // Cells joined by a space, so that a word never runs into the next cell's.
    const texts = new Map(rows.map((row) => [row, Array.from(row.cells, (cell) => cell.textContent).join(" ")
      .toLowerCase()]));
    input.addEventListener("input", () => {
      // Each term matches at the start of a word: "B200" finds B200 rows, not GB200 ones; "H1" still finds H100.
      const terms = input.value.toLowerCase().split(/\s+/).filter(Boolean)
        .map((term) => new RegExp(`(^|[^a-z0-9])${term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      let shown = 0;
      for (const row of rows) {
        const match = terms.every((term) => term.test(texts.get(row)));
        row.hidden = !match;
        shown += match ? 1 : 0;
      }
      counter.textContent = `${shown} of ${rows.length} rows`;
    });
  }

  // On a phone each row stacks (site.css): every cell carries its column's name.
  for (const table of document.querySelectorAll("table")) {
    if (!table.tHead) continue;
    const names = Array.from(table.tHead.rows[0].cells, (cell) => cell.textContent.replace(/[↕▲▼]/g, "").trim());
    for (const body of table.tBodies) {
      for (const row of body.rows) {
        let index = 0;
        for (const cell of row.cells) {
          if (cell.tagName === "TD" && names[index]) cell.dataset.label = names[index];
          index += cell.colSpan || 1;
        }
      }
    }
  }

  // Charts: where a chart is narrow (a phone), legends in two columns and labels and titles cut to fit; a failure
  // is logged, the text alternative stays.
  function draw(element) {
    const spec = JSON.parse(document.getElementById(element.dataset.spec).textContent);
    const width = element.clientWidth;
    if (width < 600) {
      const config = spec.config || {};
      // two legends (family, and the front's size) one above the other rather than side by side
      const stacked = { bottom: { anchor: "start", direction: "vertical" } };
      spec.config = { ...config, legend: { ...(config.legend || {}), columns: 2, layout: stacked },
                      axis: { ...(config.axis || {}), titleLimit: width - 70 },
                      axisY: { ...(config.axisY || {}), labelLimit: Math.round(width * 0.42) } };
    }
    window.vegaEmbed(element, spec, { actions: false, renderer: "svg" })
      .catch((error) => console.error(`chart ${element.id}: ${error}`));
  }

  // A chart inside a closed <details> has no width yet: it is drawn when the details first open.
  for (const element of document.querySelectorAll("div.vega[data-spec]")) {
    const closed = element.closest("details:not([open])");
    if (!closed) {
      draw(element);
      continue;
    }
    closed.addEventListener("toggle", () => {
      if (closed.open && !element.dataset.drawn) {
        element.dataset.drawn = "yes";
        draw(element);
      }
    });
  }

  function openLinkedDetails() {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id ? document.getElementById(id) : null;
    for (let details = target ? target.closest("details") : null; details; details = details.parentElement.closest("details")) {
      details.open = true;
    }
    if (target) target.scrollIntoView();
  }
  window.addEventListener("hashchange", openLinkedDetails);
  openLinkedDetails();
})();
