// Express 4 is installed under the alias `express4` to test both majors; its API as used here
// matches the Express 5 types.
declare module 'express4' {
  import express from 'express';
  export default express;
}
