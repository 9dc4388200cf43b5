'use strict';

const unusedHelper = 42;

function compare(a, b) {
  if (a == b) {
    return true;
  }
  return undefinedVariable;
}

module.exports = { compare };
