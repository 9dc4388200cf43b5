import { describe, expect, it } from 'vitest';
import cart from '../../src/cart.js';
import format from '../../src/format.js';

describe('cart', () => {
  it('subtotal sums price * qty', () => {
    expect(cart.subtotal([{ price: 2, qty: 3 }, { price: 1, qty: 1 }])).toBe(7);
  });

  it('total applies tax', () => {
    expect(cart.total([{ price: 10, qty: 1 }])).toBe(11);
  });

  it('total applies coupon', () => {
    // Deliberately wrong expectation: the one failing test.
    expect(cart.total([{ price: 100, qty: 1 }], { percent: 10 })).toBe(90);
  });

  it.skip('refunds are not implemented yet', () => {
    expect(true).toBe(false);
  });

  it.todo('gift cards');
});

describe('format', () => {
  it('money in JPY', () => {
    expect(format.money(1234.4, 'JPY')).toBe('¥1234');
  });
});
