// The query page: YASGUI pointed at this endpoint, the caller's key in session storage, and what the caller may see.
/* global window, document, fetch, URL, URLSearchParams */
(function () {
  'use strict';
  var endpoint = new URL(document.body.getAttribute('data-endpoint'), window.location.href).href;
  var STORAGE = 'sparql-guard-key';
  var keyInput = document.getElementById('key');

  function key() {
    try { return window.sessionStorage.getItem(STORAGE) || ''; } catch { return ''; }
  }
  function authorization() {
    var value = key();
    return value === '' ? {} : { Authorization: 'Bearer ' + value };
  }

  // The key never enters YASGUI's configuration, so YASGUI can neither persist it nor put it
  // in a share link: every request to this endpoint gets its credentials here, from session
  // storage, and loses any credential header that came from elsewhere (a link, old state).
  var nativeFetch = window.fetch.bind(window);
  window.fetch = function (input, init) {
    var request = new window.Request(input, init);
    var url = new URL(request.url);
    if (url.origin + url.pathname !== new URL(endpoint).origin + new URL(endpoint).pathname) return nativeFetch(request);
    var headers = new window.Headers(request.headers);
    headers.delete('authorization');
    headers.delete('x-api-key');
    var own = authorization();
    if (own.Authorization !== undefined) headers.set('Authorization', own.Authorization);
    return nativeFetch(new window.Request(request, { headers: headers }));
  };

  // What a link may set: the query and how it is shown. Never headers, request arguments or
  // another endpoint (a link is a URL, and a URL ends up in history, logs and chat messages).
  var LINK_PARAMS = ['query', 'tabTitle', 'requestMethod', 'contentTypeConstruct', 'contentTypeSelect', 'outputFormat', 'outputSettings', 'namedGraph', 'defaultGraph'];
  // The parameters of a link's hash that the page keeps: those of LINK_PARAMS, and outputSettings
  // only as a JSON object (YASGUI's link reader throws on bad JSON, which stopped this script, and
  // hands anything else to a result plugin that expects an object). URLSearchParams never throws,
  // even on a broken percent-encoding.
  function readLink(hash) {
    var kept = new URLSearchParams();
    new URLSearchParams(hash.replace(/^#/, '')).forEach(function (value, name) {
      if (LINK_PARAMS.indexOf(name) < 0) return;
      if (name === 'outputSettings' && !isJsonObject(value)) return;
      kept.append(name, value);
    });
    return kept;
  }
  function isJsonObject(text) {
    try {
      var value = JSON.parse(text);
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    } catch {
      return false;
    }
  }
  function fromLink(config) {
    config.requestConfig.headers = {};
    config.requestConfig.args = [];
    config.requestConfig.endpoint = endpoint;
    return config;
  }
  // YASGUI's share link (the share button) keeps the allowed parameters only.
  var Tab = window.Yasgui.Tab;
  var shareableLink = Tab.prototype.getShareableLink;
  Tab.prototype.getShareableLink = function (base) {
    var link = new URL(shareableLink.call(this, base));
    link.search = '';
    link.hash = readLink(link.hash).toString();
    return link.href;
  };

  // YASGUI reads the link from the address itself: give it the kept parameters only.
  var opened = readLink(window.location.hash).toString();
  var address = window.location.pathname + window.location.search + (opened === '' ? '' : '#' + opened);
  window.history.replaceState(window.history.state, '', address);
  // A link's query is shown, never run on load: any page can send this tab to a link, and the
  // query would run in the name of the key stored here. YASGUI runs it with Tab.query() while it
  // is being built, and the query button calls the editor directly, so only that call is held.
  var building = true;
  var tabQuery = Tab.prototype.query;
  Tab.prototype.query = function () {
    return building ? Promise.resolve() : tabQuery.call(this);
  };
  var yasgui = new window.Yasgui(document.getElementById('yasgui'), {
    persistenceId: 'sparql-guard-' + endpoint,
    copyEndpointOnNewTab: true,
    populateFromUrl: fromLink,
    endpointCatalogueOptions: { getData: function () { return [{ endpoint: endpoint }]; } },
    requestConfig: { endpoint: endpoint, method: 'POST', headers: {}, args: [] },
    yasqe: { value: 'SELECT * WHERE {\n  ?s ?p ?o\n} LIMIT 10' },
    // Answers stay out of local storage: they are one caller's data, and the next person at
    // this browser (or the same after Forget) would see them.
    yasr: { maxPersistentResponseSize: 0 },
  });
  building = false;
  // For scripts that embed or test the page.
  window.yasgui = yasgui;
  // Tabs persisted from an earlier visit keep their endpoint and may hold headers from an old
  // link: point them all at this endpoint, with no header and no argument of their own.
  Object.keys(yasgui._tabs || {}).forEach(function (id) {
    var tab = yasgui.getTab(id);
    if (tab && tab.setRequestConfig) tab.setRequestConfig({ headers: {}, args: [] });
    if (tab && tab.setEndpoint) tab.setEndpoint(endpoint);
  });

  function setQuery(text) {
    var tab = yasgui.getTab();
    tab.setQuery(text);
    tab.getYasqe().setValue(text);
  }

  function example(label, text) {
    var item = document.createElement('li');
    var button = document.createElement('button');
    button.type = 'button';
    button.textContent = label;
    button.addEventListener('click', function () { setQuery(text); });
    item.appendChild(button);
    return item;
  }

  function showExamples(graphs) {
    var list = document.getElementById('examples');
    list.replaceChildren(
      example('Ten triples', 'SELECT * WHERE {\n  ?s ?p ?o\n} LIMIT 10'),
      example('Triples per graph', 'SELECT ?g (COUNT(*) AS ?triples) WHERE {\n  GRAPH ?g { ?s ?p ?o }\n}\nGROUP BY ?g'),
      example('Classes in use', 'SELECT ?class (COUNT(?s) AS ?instances) WHERE {\n  ?s a ?class\n}\nGROUP BY ?class\nORDER BY DESC(?instances)')
    );
    graphs.slice(0, 5).forEach(function (graph) {
      list.appendChild(example('In ' + graph, 'SELECT * WHERE {\n  GRAPH <' + graph + '> { ?s ?p ?o }\n} LIMIT 10'));
    });
  }

  function asArray(value) {
    if (value === undefined || value === null) return [];
    return Array.isArray(value) ? value : [value];
  }

  // A small note under a granted graph's name: what the caller does not see there.
  function addNote(item, className, text) {
    var note = document.createElement('small');
    note.className = className;
    note.textContent = text;
    item.appendChild(document.createElement('br'));
    item.appendChild(note);
  }

  // The service description, in the caller's name: the facts of the caller's own grant.
  function showAccess() {
    var status = document.getElementById('access-status');
    var facts = document.getElementById('access-facts');
    status.className = '';
    status.textContent = 'Loading…';
    var headers = authorization();
    headers.Accept = 'application/ld+json';
    fetch(endpoint, { headers: headers, credentials: 'same-origin', cache: 'no-store' })
      .then(function (response) {
        return response.text().then(function (text) {
          if (!response.ok) throw new Error(response.status + ': ' + text.trim());
          return JSON.parse(text);
        });
      })
      .then(function (description) {
        var caller = description['guard:caller'] || {};
        var dataset = description['sd:defaultDataset'] || {};
        var named = asArray(dataset['sd:namedGraph']);
        var graphs = named.map(function (graph) { return graph['sd:name']['@id']; });
        var groups = asArray(caller['guard:group']).map(function (group) { return group['@value']; });
        document.getElementById('agent').textContent = (caller['guard:agent'] || {})['@id'] || '';
        document.getElementById('groups').textContent = groups.length === 0 ? 'none' : groups.join(', ');
        var list = document.getElementById('graphs');
        list.replaceChildren.apply(list, named.map(function (graph) {
          var item = document.createElement('li');
          item.textContent = graph['sd:name']['@id'];
          // The predicates the guard withholds from this caller in this graph.
          var hidden = asArray(graph['guard:hidePath']).map(function (path) { return path['@id']; });
          if (hidden.length > 0) addNote(item, 'hidden-paths', 'hidden from you: ' + hidden.join(', '));
          // The only predicates this caller reads here (guard:readPath), and whether a row rule picks the records.
          var columns = asArray(graph['guard:readPath']).map(function (path) { return path['@id']; });
          if (columns.length > 0) addNote(item, 'read-paths', 'only these predicates: ' + columns.join(', '));
          if (graph['guard:rowsRestricted'] === true) addNote(item, 'rows-restricted', 'a row rule decides which records you read');
          return item;
        }));
        status.textContent = graphs.length === 0 ? 'No graph is granted to you.' : graphs.length + ' graph(s) granted to you.';
        facts.hidden = false;
        showExamples(graphs);
      })
      .catch(function (error) {
        facts.hidden = true;
        status.className = 'refused';
        status.textContent = error.message;
        showExamples([]);
      });
  }

  // The answers on screen are the previous caller's: a new caller (Forget, or another key) starts
  // with none, and a query still running is stopped so its answer never appears. Yasr has no
  // clear of its own; this undoes what its draw() built (pinned YASGUI, see package.json).
  function clearResults() {
    Object.keys(yasgui._tabs || {}).forEach(function (id) {
      var tab = yasgui.getTab(id);
      var yasqe = tab && tab.getYasqe && tab.getYasqe();
      if (yasqe && yasqe.abortQuery) yasqe.abortQuery();
      var yasr = tab && tab.getYasr && tab.getYasr();
      if (!yasr) return;
      var drawn = yasr.drawnPlugin && yasr.plugins[yasr.drawnPlugin];
      if (drawn && drawn.destroy) drawn.destroy();
      yasr.drawnPlugin = undefined;
      yasr.results = undefined;
      yasr.resultsEl.replaceChildren();
      yasr.pluginControls.replaceChildren();
      yasr.emptyFallbackElement();
      yasr.draw();
    });
  }

  keyInput.value = key();
  document.getElementById('credentials').addEventListener('submit', function (event) {
    event.preventDefault();
    var previous = key();
    try { window.sessionStorage.setItem(STORAGE, keyInput.value.trim()); } catch { /* storage off: nothing kept */ }
    if (key() !== previous) clearResults();
    showAccess();
  });
  document.getElementById('forget').addEventListener('click', function () {
    try { window.sessionStorage.removeItem(STORAGE); } catch { /* nothing kept */ }
    keyInput.value = '';
    clearResults();
    showAccess();
  });
  showAccess();
})();
