'use strict';

const { TAX_RATE } = require('./constants');

function subtotal(items) {
  return items.reduce((sum, item) => sum + item.price * item.qty, 0);
}

function total(items, coupon) {
  let value = subtotal(items);
  if (coupon && coupon.percent > 0) {
    value = value * (1 - coupon.percent / 100);
  }
  return Math.round(value * (1 + TAX_RATE) * 100) / 100;
}

function isEmpty(items) {
  return !items || items.length === 0;
}

module.exports = { subtotal, total, isEmpty };
