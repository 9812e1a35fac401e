// The query page: YASGUI pointed at this endpoint, the caller's key in session storage, and what the caller may see.
/* global window, document, fetch, URL */
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

  var yasgui = new window.Yasgui(document.getElementById('yasgui'), {
    persistenceId: 'sparql-guard-' + endpoint,
    copyEndpointOnNewTab: true,
    endpointCatalogueOptions: { getData: function () { return [{ endpoint: endpoint }]; } },
    requestConfig: {
      endpoint: endpoint,
      method: 'POST',
      // Read at every request, so a new key applies to the open tabs at once.
      headers: function () { return authorization(); },
    },
    yasqe: { value: 'SELECT * WHERE {\n  ?s ?p ?o\n} LIMIT 10' },
  });
  // For scripts that embed or test the page.
  window.yasgui = yasgui;
  // Tabs persisted from an earlier visit keep their endpoint: point them all at this one.
  Object.keys(yasgui._tabs || {}).forEach(function (id) {
    var tab = yasgui.getTab(id);
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
        var graphs = asArray(dataset['sd:namedGraph']).map(function (graph) { return graph['sd:name']['@id']; });
        var groups = asArray(caller['guard:group']).map(function (group) { return group['@value']; });
        document.getElementById('agent').textContent = (caller['guard:agent'] || {})['@id'] || '';
        document.getElementById('groups').textContent = groups.length === 0 ? 'none' : groups.join(', ');
        var list = document.getElementById('graphs');
        list.replaceChildren.apply(list, graphs.map(function (graph) {
          var item = document.createElement('li');
          item.textContent = graph;
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

  keyInput.value = key();
  document.getElementById('credentials').addEventListener('submit', function (event) {
    event.preventDefault();
    try { window.sessionStorage.setItem(STORAGE, keyInput.value.trim()); } catch { /* storage off: nothing kept */ }
    showAccess();
  });
  document.getElementById('forget').addEventListener('click', function () {
    try { window.sessionStorage.removeItem(STORAGE); } catch { /* nothing kept */ }
    keyInput.value = '';
    showAccess();
  });
  showAccess();
})();
