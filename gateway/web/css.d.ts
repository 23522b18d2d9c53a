// esbuild bundles the page's CSS imports (xterm.js's stylesheet and ours) into app.css.
declare module "*.css";
