import { connect } from "/static/feed.js";
import { base, renderTablePage } from "/static/tablepage.js";

const app = document.getElementById("app");
connect(`/sse/table/${base}`, {}, (m) => renderTablePage(app, m));
