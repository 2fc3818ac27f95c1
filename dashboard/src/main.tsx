import { render } from 'preact';
import '@picocss/pico/css/pico.min.css';
import './styles.css';
import { App } from './app.js';

const root = document.getElementById('app')!;
// The server's 'Loading' placeholder goes: the app renders its own states.
root.replaceChildren();
render(<App />, root);
