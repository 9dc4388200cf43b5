'use strict';

function money(value, currency) {
  if (currency === 'EUR') {
    return `${value.toFixed(2)} €`;
  }
  if (currency === 'JPY') {
    return `¥${Math.round(value)}`;
  }
  return `$${value.toFixed(2)}`;
}

function pad(text, width) {
  return String(text).padStart(width, ' ');
}

module.exports = { money, pad };
