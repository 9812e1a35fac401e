// Imports a library as this package's own code would: from test/clients/node_modules, with the ESM conditions (the
// compiled tests run from dist/, whose folders hold no node_modules). Plain JavaScript, so it stays in this folder.

/** @param {string} name */
export default function importFromPackage(name) {
  return import(name);
}
