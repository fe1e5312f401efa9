"""The review page: one HTML document, inline CSS and JS, no external asset (:func:`page_html`).

The JS loads the list (``/api/items``), then each item as it is shown (``/api/item``), and
draws every view as inline SVG at one scale (:data:`PIXELS_PER_UM`): the observed frame
(stepped through the claimed id's track with ``,`` / ``.``, each step centred on the track's
own place in that frame), the anchor frame around the claimed identity's place (its
neighbours labelled with their ids, each label placed where it covers no other label or
point, else left out), the track's start when the audit records one, and a small
whole-frame view with the crop's box. With images each view holds the crop the server
renders (``/api/image``: a PNG, its extent in micrometres in the ``X-Extent`` header,
fetched with the token header and shown as a ``data:`` URL); without, the points alone,
and the page says the review is geometric only. Points are drawn only inside the view's
box, which a margin surrounds, so no mark is cut at the edge.

Keys are handled one after the other: a decision moves to the next item only once the
server has answered that it is written. A refused or failed post (the server stopped,
another token, review.csv edited) shows the reason in the red ``#status`` line, keeps the
item and drops the keys pressed after it; pressing the key again retries (the server
restarted on the same folder takes the same address and token).

Blind (the default) the page holds no code that shows the audit's judgement: the triage
script (:data:`TRIAGE`) is part of the document only in triage mode.
"""

from trackverify.review.images import HALF_UM

#: Screen pixels per micrometre of every view (one scale for all).
PIXELS_PER_UM = 9

PAGE = r"""<!doctype html><html><head><meta charset="utf-8"><title>trackverify review</title>
<style>body{font:14px sans-serif;margin:1em}svg{margin:2px;background:#f4f4f4}
.d{font-weight:bold}.note{color:#555}text{font-size:10px;font-family:sans-serif}
.row{display:flex;align-items:flex-start;gap:4px}.row h3{width:100px;flex:none;margin:4px 0;font-size:13px}.row>div{display:flex;align-items:flex-start}
#status{color:#fff;background:#b00;padding:4px}#status:empty{display:none}
#images.bad{color:#fff;background:#b60;padding:4px}
image{image-rendering:pixelated}.me{fill:none;stroke:#f80;stroke-width:2}
.nb{fill:none;stroke:#0bd;stroke-width:1.2}.far{fill:none;stroke:#0bd;stroke-width:1;stroke-dasharray:2 2;opacity:.6}
.lab{fill:#067}.melab{fill:#c50;font-weight:bold}.box{fill:none;stroke:#f80}.edge{fill:none;stroke:#bbb}
</style></head><body>
<div id="progress">loading</div><div id="interval"></div><p id="status" role="alert"></p>
<p id="images"></p><div id="head"></div><div id="where" class="note"></div>
<div class="row"><h3 id="obstitle">observed frame</h3><div id="observed"></div></div>
<div class="row"><h3 id="anctitle">anchor frame</h3><div id="anchor"></div></div>
<div class="row" id="startrow"><h3 id="starttitle">track start</h3><div id="start"></div></div>
<p class="note" id="note"></p>
<p class="note">keys: c correct, w wrong, u unsure (decide and advance); x or Delete clears the
decision; b / Backspace back; arrows move; , / . step through the claimed id's track;
[ / ] dark limit, - / + bright limit, 0 resets the contrast</p>
<script>
const token=new URLSearchParams(location.search).get("token");
const S=__S__,H=__H__,P=14,W=2*H*S+2*P,OV=180;
const LOWS=[0,10,50,100,200,500],HIGHS=[900,950,980,990,995,999,1000];
let info={},items=[],at=0,step=null,details={},gen=0,lo=1,hi=4,spent={},shownAt=performance.now(),shown=-1;
function esc(s){return String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"})[c])}
function $(id){return document.getElementById(id)}
function say(t){$("status").textContent=t}
async function why(r){if(r.status===403)return "the server refused this page's token: open the address the terminal printed";
 let t="";try{t=(await r.json()).error}catch(e){}return `the server answered ${r.status}${t?": "+t:""}`}
async function call(url,opt){let r;try{r=await fetch(url,{...opt,headers:{"X-Token":token,"Content-Type":"application/json"}})}
 catch(e){throw "the server does not answer: start trackverify review on this folder again, then press the key again"}
 if(!r.ok)throw await why(r);return r.json()}
function pct(v){return v===null||v===undefined?"undefined":(100*v).toFixed(1)+" %"}
function showInterval(){const b=info.interval&&info.interval.all;if(!b){$("interval").textContent=info.interval_note||"";return}
 let t=`error rate of all audited observations: 95 % anytime-valid interval ${pct(b.low)} to ${pct(b.high)} (half-width ${(100*b.half_width).toFixed(1)} points`;
 if(b.target_met!==null)t+=b.target_met?`; target ${(100*info.target).toFixed(1)} points reached: you may stop`:`; target ${(100*info.target).toFixed(1)} points not reached yet`;
 $("interval").textContent=t+")"+extraInterval(info.interval)}
function place(labels,marks){const boxes=[[0,0,W,P-2]];let out="";
 for(const l of labels){const w=6*l.text.length+2,h=10,r=l.r+1;let spot=null,first=null;
  for(const [dx,dy] of [[r,-r],[r,r+h],[-r-w,-r],[-r-w,r+h],[-w/2,-r-2],[-w/2,r+h+2]]){
   const bx=l.x+dx,by=l.y+dy-h;if(bx<1||by<1||bx+w>W-1||by+h>W-1)continue;
   if(boxes.some(q=>bx<q[0]+q[2]&&q[0]<bx+w&&by<q[1]+q[3]&&q[1]<by+h))continue;
   first=first||[bx,by];
   if(marks.some(m=>{const cx=Math.max(bx,Math.min(m.x,bx+w)),cy=Math.max(by,Math.min(m.y,by+h));return (cx-m.x)**2+(cy-m.y)**2<m.r*m.r}))continue;
   spot=[bx,by];break}
  spot=spot||(l.always?first:null);  // the claimed id's label over a mark rather than none
  if(spot){boxes.push([spot[0],spot[1],w,h]);out+=`<text x="${spot[0]+1}" y="${spot[1]+h-1}" class="${l.cls}">${esc(l.text)}</text>`}}
 return out}
function view(id,c,a,b,depth,slab,points,me,extra,title){
 const R=info.images?7:4,X=u=>P+(u-c[a]+H)*S,Y=v=>P+(v-c[b]+H)*S,near=(p,q)=>Math.abs(p.x-q.x)<.01&&Math.abs(p.y-q.y)<.01&&(p.z===undefined||Math.abs(p.z-q.z)<.01);
 let s=`<svg width="${W}" height="${W}"><defs><clipPath id="c-${id}"><rect x="${P}" y="${P}" width="${2*H*S}" height="${2*H*S}"/></clipPath></defs>`;
 s+=`<image id="i-${id}" clip-path="url(#c-${id})" preserveAspectRatio="none" width="0" height="0"/><rect class="edge" x="${P}" y="${P}" width="${2*H*S}" height="${2*H*S}"/>`;
 const marks=[],labels=[];
 for(const p of points){if(p[a]===undefined||p[b]===undefined||near(p,c)||Math.abs(p[a]-c[a])>H||Math.abs(p[b]-c[b])>H)continue;
  const x=X(p[a]),y=Y(p[b]),inside=depth===null||p[depth]===undefined||Math.abs(p[depth]-c[depth])<=slab;
  s+=`<circle cx="${x}" cy="${y}" r="${R}" class="${inside?"nb":"far"}"/>`;marks.push({x,y,r:R});
  if(p.label!==null&&p.label!==undefined&&inside)labels.push({x,y,r:R,text:p.label,cls:"lab"})}
 for(const e of extra){if(Math.abs(e.p[a]-c[a])>H||Math.abs(e.p[b]-c[b])>H)continue;const x=X(e.p[a]),y=Y(e.p[b]);
  s+=`<path d="M${x-6} ${y}h12M${x} ${y-6}v12" class="${e.cls}"/>`;marks.push({x,y,r:6});labels.unshift({x,y,r:6,text:e.text,cls:e.lcls})}
 const cx=X(c[a]),cy=Y(c[b]);if(!info.images)s+=`<circle cx="${cx}" cy="${cy}" r="2.5" fill="#f80"/>`;s+=`<path class="me" d="M${cx-20} ${cy}h9M${cx+11} ${cy}h9M${cx} ${cy-20}v9M${cx} ${cy+11}v9"/>`;marks.push({x:cx,y:cy,r:11});
 if(me)labels.unshift({x:cx+8,y:cy-8,r:6,text:me,cls:"melab",always:true});
 s+=`<text x="2" y="10" class="title">${esc(title)}</text>`;s+=place(labels,marks);return s+"</svg>"}
function slabs(){return info.slab_um||{xy:4,xz:4,plane:1}}
function panel(el,key,c,points,me,extra,title,dims){
 const z=dims.includes("z"),sl=slabs();
 let s=view(key+"-xy",c,"x","y",z?"z":null,sl.xy,points,me,extra,`x-y, ${title}`);
 if(z){s+=view(key+"-xz",c,"x","z","y",sl.xz,points,me,extra,`x-z, ${title}`);s+=view(key+"-plane",c,"x","y","z",sl.plane,points,me,extra,`plane, ${title}`)}
 el.innerHTML=s;return z?["xy","xz","plane"]:["xy"]}
function overview(st){const pts=st.outline,c=st.place;if(info.images&&info.images.shows.includes(items[at].recording)){const e=info.images.extent_um;return {x0:e[0],x1:e[1],y0:e[2],y1:e[3]}}let x0=Math.min(c.x-H,...pts.map(p=>p[0]))-5,x1=Math.max(c.x+H,...pts.map(p=>p[0]))+5,
 y0=Math.min(c.y-H,...pts.map(p=>p[1]))-5,y1=Math.max(c.y+H,...pts.map(p=>p[1]))+5;
 return {x0,x1,y0,y1}}
function drawOverview(st,ext){const k=OV/Math.max(ext.x1-ext.x0,ext.y1-ext.y0),w=(ext.x1-ext.x0)*k,h=(ext.y1-ext.y0)*k,c=st.place;
 let s=`<svg width="${w}" height="${h}" id="ovsvg"><image id="i-ov" preserveAspectRatio="none" width="0" height="0"/>`;
 if(!info.images)for(const p of st.outline)s+=`<circle cx="${(p[0]-ext.x0)*k}" cy="${(p[1]-ext.y0)*k}" r="1.5" fill="#888"/>`;
 s+=`<rect class="box" x="${(c.x-H-ext.x0)*k}" y="${(c.y-H-ext.y0)*k}" width="${2*H*k}" height="${2*H*k}"/><text x="2" y="10" fill="#f80">whole frame ${st.frame}</text></svg>`;return s}
async function image(g,index,pan,vw,stepIndex,c,a,b,ov){
 const q=`/api/image?index=${index}&panel=${pan}&view=${vw}&step=${stepIndex}&low=${LOWS[lo]}&high=${HIGHS[hi]}`;let r;
 try{r=await fetch(q,{headers:{"X-Token":token}})}catch(e){return}
 if(g!==gen)return;const el=$(ov?"i-ov":`i-${pan}-${vw}`);if(!el)return;
 if(!r.ok){let t="";try{t=(await r.json()).error}catch(e){}el.parentNode.insertAdjacentHTML("beforeend",`<text x="${P+4}" y="${W/2}" fill="#b00">${esc(t||r.status)}</text>`);return}
 const e=r.headers.get("X-Extent").split(",").map(Number),blob=await r.blob();
 const url=await new Promise(ok=>{const f=new FileReader();f.onload=()=>ok(f.result);f.readAsDataURL(blob)});if(g!==gen)return;
 if(ov){const sv=$("ovsvg"),x=ov;const k=OV/Math.max(x.x1-x.x0,x.y1-x.y0);
  el.setAttribute("x",(e[0]-x.x0)*k);el.setAttribute("y",(e[2]-x.y0)*k);el.setAttribute("width",(e[1]-e[0])*k);el.setAttribute("height",(e[3]-e[2])*k)}
 else{el.setAttribute("x",P+(e[0]-c[a]+H)*S);el.setAttribute("y",P+(e[2]-c[b]+H)*S);el.setAttribute("width",(e[1]-e[0])*S);el.setAttribute("height",(e[3]-e[2])*S)}
 el.setAttribute("href",url);el.setAttribute("data-extent",e.join(","))}
function images(g,index,pan,views,stepIndex,c){if(!info.images||!info.images.shows.includes(items[at].recording))return;
 for(const v of views)image(g,index,pan,v,stepIndex,c,"x",v==="xz"?"z":"y",null)}
function whereText(w){const f=(v)=>v===undefined||v===null?"":Number(v).toFixed(2);let t=[];
 if(w.row!==undefined)t.push(`row ${w.row} of the tracks`);
 if(w.x_file!==undefined)t.push(`file coordinates (${f(w.x_file)}, ${f(w.y_file)}${w.z_file!==undefined?", "+f(w.z_file):""})`);
 if(w.t_index!==undefined)t.push(`volume time index ${w.t_index}, voxel (x ${f(w.x_voxel)}, y ${f(w.y_voxel)}${w.z_voxel!==undefined?", z "+f(w.z_voxel):""})`);
 return t.join("; ")}
async function draw(){const it=items[at];if(!it)return;const g=++gen;
 if(shown!==it.index){if(shown>=0)spent[shown]=(spent[shown]||0)+(performance.now()-shownAt)/1000;shown=it.index;shownAt=performance.now()}
 const n=items.filter(i=>i.decision).length;$("progress").textContent=`${n} of ${items.length} decided`;showInterval();
 $("head").innerHTML=`item ${at+1} of ${items.length}: recording ${esc(it.recording)}, frame ${it.frame}, claimed id ${esc(it.pred_id)}; decision: <span class="d" id="decision">${esc(it.decision||"none")}</span>`;
 $("where").textContent=whereText(it.where);
 let d;try{d=details[it.index]||(details[it.index]=await call(`/api/item?index=${it.index}`,{}))}catch(e){say(`cannot load item ${at+1}: ${e}`);return}
 if(g!==gen)return;if(step===null)step=d.at;step=Math.max(0,Math.min(step,d.steps.length-1));const st=d.steps[step],delta=st.frame-d.frame;
 $("obstitle").textContent=`observed frame ${st.frame}`+(delta?` (t${delta>0?"+":""}${delta})`:"")+`, track step ${step-d.at>0?"+":""}${step-d.at}`;
 const ext=overview(st);
 const views=panel($("observed"),"observed",st.place,st.points,it.pred_id,judgedMarks(d,step),`frame ${st.frame}`,d.dims);
 $("observed").insertAdjacentHTML("beforeend",drawOverview(st,ext));
 images(g,it.index,"observed",views,step,st.place);
 if(info.images&&info.images.shows.includes(it.recording))image(g,it.index,"observed","overview",step,st.place,"x","y",ext);
 if(d.anchor.place){$("anctitle").textContent=`anchor frame ${d.anchor.frame}`;
  const av=panel($("anchor"),"anchor",d.anchor.place,d.anchor.points,it.pred_id,[],`frame ${d.anchor.frame}`,d.dims);images(g,it.index,"anchor",av,0,d.anchor.place)}
 else{$("anctitle").textContent="anchor frame";$("anchor").textContent=`id ${it.pred_id} has no row in the anchor frame ${d.anchor.frame}`}
 const sr=d.start&&d.start.frame!==d.anchor.frame;$("startrow").style.display=sr?"flex":"none";
 if(sr){$("starttitle").textContent=`track start, frame ${d.start.frame}`;
  const sv=panel($("start"),"start",d.start.place,d.start.points,it.pred_id,[],`frame ${d.start.frame}`,d.dims);images(g,it.index,"start",sv,0,d.start.place)}
 $("note").textContent=`Each view is ${2*H} um wide, centred on the claimed id (orange marks); cyan: ${d.points_source} near it (dashed: outside the `+
  `projected depth); anchor-frame points carry their ids. The observed frame steps through the id's track, each step centred on its row there. `+
  `Contrast: ${LOWS[lo]/10}-${HIGHS[hi]/10} percentiles of the anchor and observed crops.`+judged(d)}
async function decide(d){const it=items[at],seconds=(spent[it.index]||0)+(performance.now()-shownAt)/1000;
 try{const j=await call("/api/decision",{method:"POST",body:JSON.stringify({index:it.index,decision:d,seconds:Math.round(seconds*10)/10})});
  j.decisions.forEach((x,i)=>{if(items[i])items[i].decision=x});info.interval=j.interval;spent[it.index]=0;shownAt=performance.now();say("");return true}
 catch(e){say(`not saved: item ${at+1} is still ${it.decision||"undecided"} (${e})`);return false}}
let queue=Promise.resolve(),epoch=0;
async function key(k){const m={c:"correct",w:"wrong",u:"unsure",x:"",Delete:""};
 if(k in m){if(!await decide(m[k])){epoch++;return}if(m[k]&&at<items.length-1){at++;step=null}}
 else if(k==="b"||k==="Backspace"||k==="ArrowLeft"||k==="ArrowUp"){if(at>0){at--;step=null}}
 else if(k==="ArrowRight"||k==="ArrowDown"){if(at<items.length-1){at++;step=null}}
 else if(k===","||k==="."){const d=details[items[at].index];if(d&&step!==null)step=Math.max(0,Math.min(d.steps.length-1,step+(k==="."?1:-1)))}
 else if(k==="["||k==="]")lo=Math.max(0,Math.min(LOWS.length-1,lo+(k==="]"?1:-1)));
 else if(k==="-"||k==="+"||k==="=")hi=Math.max(0,Math.min(HIGHS.length-1,hi+(k==="-"?1:-1)));
 else if(k==="0"){lo=1;hi=4}
 await draw()}
const KEYS="cwuxb,.[]-+=0";
document.addEventListener("keydown",e=>{const k=e.key;if(!KEYS.includes(k)&&!k.startsWith("Arrow")&&k!=="Backspace"&&k!=="Delete")return;
 if(k.length>1)e.preventDefault();const n=epoch;queue=queue.then(()=>n===epoch&&items.length?key(k):null).catch(x=>say(String(x)))});
__JUDGED__
call("/api/items",{}).then(async j=>{info=j;items=j.items;at=Math.min(j.start,items.length-1);
 const im=$("images");if(!j.images){im.textContent="no images: the review is geometric only (the positions of the tracker's rows and detections); start it with --images SOURCE to see the volumes"}
 else{im.textContent=`images: ${j.images.source} (recording ${j.images.shows.join(", ")}). ${j.images.alignment}`;if(!j.images.aligned)im.className="bad"}
 await draw()}).catch(e=>say(`cannot load the items: ${e}`));
</script></body></html>"""

BLIND = "function judged(d){return \"\"}function judgedMarks(d,s){return []}function extraInterval(v){return \"\"}"

TRIAGE = r"""function judged(d){const v=d.verifier||{};return ` TRIAGE mode (the audit's judgement is shown; decisions made here are marked triage): verdict ${v.verdict}`+
 (v.reason?` (${v.reason})`:"")+`, score ${v.score===null?"none":v.score.toFixed(2)+" um"} against threshold ${v.threshold_um===null?"none":v.threshold_um.toFixed(2)+" um"}`+
 `, stratum ${v.stratum||"?"}, event ${v.event===null?"none":v.event}, look-alike ${v.lookalike_id===null?"none":v.lookalike_id}; magenta +: where the registration puts the claimed id.`+
 (d.start&&d.start.identity!==undefined?` The track starts on identity ${d.start.identity}.`:"")}
function judgedMarks(d,s){const v=d.verifier||{};return s===d.at&&v.expected?[{p:v.expected,cls:"reg",lcls:"reglab",text:"registered"}]:[]}
function extraInterval(v){const c=v&&v.certified;return c?`; certified: ${pct(c.low)} to ${pct(c.high)}, at most ${pct(c.upper_one_sided)} one-sided, ${c.n_decided} of ${c.n_rows} decided`:""}
document.head.insertAdjacentHTML("beforeend","<style>.reg{stroke:#d0d;stroke-width:2}.reglab{fill:#a0a}</style>");"""


def page_html(triage: bool = False) -> str:
    """The page; the triage script only when ``triage``."""
    return (PAGE.replace("__S__", str(PIXELS_PER_UM)).replace("__H__", f"{HALF_UM:g}")
            .replace("__JUDGED__", TRIAGE if triage else BLIND))
