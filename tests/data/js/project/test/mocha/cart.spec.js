const assert = require('node:assert/strict');
const { subtotal, total, isEmpty } = require('../../src/cart');
const { money, pad } = require('../../src/format');

describe('cart', function () {
  it('subtotal sums price * qty', function () {
    assert.equal(subtotal([{ price: 2, qty: 3 }, { price: 1, qty: 1 }]), 7);
  });

  it('total applies tax', function () {
    assert.equal(total([{ price: 10, qty: 1 }]), 11);
  });

  it('total applies coupon', function () {
    // Deliberately wrong expectation: the one failing test.
    assert.equal(total([{ price: 100, qty: 1 }], { percent: 10 }), 90);
  });

  it('isEmpty', function () {
    assert.equal(isEmpty(null), true);
  });

  it.skip('refunds are not implemented yet', function () {
    assert.fail('never');
  });

  it('pending test without a body');
});

describe('format', function () {
  it('money in USD', function () {
    assert.equal(money(3, 'USD'), '$3.00');
  });

  it('pad', function () {
    assert.equal(pad(7, 3), '  7');
  });
});
