'use strict';

function broken( {
  return 1;
}
