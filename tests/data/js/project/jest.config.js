module.exports = {
  testMatch: ['<rootDir>/test/jest/**/*.test.js'],
};
